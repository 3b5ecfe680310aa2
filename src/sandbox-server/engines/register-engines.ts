import { ne, sql } from 'drizzle-orm';
import { LOCAL_ENGINE } from '../../contracts/engine.js';
import type { Database } from '../db/client.js';
import { engines } from '../db/schema.js';
import { ENGINES_CHANNEL } from '../replicas/hand-off.js';
import type { EngineAddress } from './engine-address.js';

/**
 * The engines a control plane brings at start. With DOCKER_ENGINES, each is registered, or its
 * address updated (its state, limits and labels stay as the API set them). Without it, this
 * machine's engine is `local` (its address updated to DOCKER_HOST or the default socket) unless
 * other engines were registered through the API: today's single-engine behaviour, unchanged.
 */
export async function registerConfiguredEngines(db: Database, configured: readonly EngineAddress[] | undefined, localDockerUrl: string): Promise<void> {
  await db.transaction(async (tx) => {
    let wanted: readonly EngineAddress[] = configured ?? [];
    if (!configured) {
      const others = await tx.select({ name: engines.name }).from(engines).where(ne(engines.name, LOCAL_ENGINE)).limit(1);
      wanted = others.length > 0 ? [] : [{ name: LOCAL_ENGINE, dockerUrl: localDockerUrl, advertiseHost: '127.0.0.1' }];
    }
    for (const engine of wanted) {
      await tx
        .insert(engines)
        .values(engine)
        .onConflictDoUpdate({ target: engines.name, set: { dockerUrl: engine.dockerUrl, advertiseHost: engine.advertiseHost } });
    }
    if (wanted.length > 0) await tx.execute(sql`select pg_notify(${ENGINES_CHANNEL}, '')`);
  });
}
