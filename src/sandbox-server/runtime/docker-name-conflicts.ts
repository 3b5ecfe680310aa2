import { setTimeout as sleep } from 'node:timers/promises';

const NAME_CONFLICT_ATTEMPTS = 20;
const NAME_CONFLICT_WAIT_MS = 100;

/**
 * What `find` finds of the winner of a name conflict (a container or network), asked again for a
 * short while: the engine reserves a name before it shows what took it. undefined if nothing shows.
 */
export async function winnerOf<T>(find: () => Promise<T | undefined>): Promise<T | undefined> {
  for (let attempt = 0; ; attempt++) {
    const found = await find();
    if (found !== undefined || attempt >= NAME_CONFLICT_ATTEMPTS) return found;
    await sleep(NAME_CONFLICT_WAIT_MS);
  }
}
