import { NotFoundError } from '../../errors/index.js';

/**
 * The lock of one conversation between its writes and its delete: writes (metadata saves, event
 * appends) run side by side as before; a delete closes the guard, which refuses every later write
 * as if the conversation were gone and resolves once the writes already running have finished. So
 * nothing is written into a directory being removed, and nothing a delete removed is written again.
 */
export interface WriteGuard {
  run<T>(write: () => Promise<T>): Promise<T>;
  /** Refuses writes from now on; resolves when none is running. */
  close(): Promise<void>;
  readonly closed: boolean;
}

export function createWriteGuard(): WriteGuard {
  let running = 0;
  let closed = false;
  let drained: (() => void) | undefined;
  return {
    get closed() {
      return closed;
    },
    async run(write) {
      if (closed) throw new NotFoundError('Conversation not found');
      running += 1;
      try {
        return await write();
      } finally {
        running -= 1;
        if (running === 0) drained?.();
      }
    },
    close() {
      closed = true;
      if (running === 0) return Promise.resolve();
      return new Promise((resolve) => (drained = resolve));
    },
  };
}
