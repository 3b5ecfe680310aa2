import { eq, ne } from 'drizzle-orm';
import { LOCAL_ENGINE } from '../../contracts/engine.js';
import type { Database } from '../db/client.js';
import { engines } from '../db/schema.js';
import { recordEvent } from '../lifecycle-events/record-event.js';
import { announceEngines } from '../services/engines/announce-engines.js';
import type { Transaction } from '../services/context.js';
import type { EngineAddress } from './engine-address.js';

/**
 * The engines a control plane brings at start. With DOCKER_ENGINES, each is registered, or its
 * address updated (its state, limits and labels stay as the API set them). Without it, this
 * machine's engine is `local` (its address updated to DOCKER_HOST or the default socket) unless
 * other engines were registered through the API: today's single-engine behaviour, unchanged.
 * A row created records `engine.registered` and a changed address `engine.updated`, as the API
 * does; a restart with the same setting changes nothing and records nothing.
 */
export async function registerConfiguredEngines(db: Database, configured: readonly EngineAddress[] | undefined, localDockerUrl: string): Promise<void> {
  await db.transaction(async (tx) => {
    let wanted: readonly EngineAddress[] = configured ?? [];
    if (!configured) {
      const others = await tx.select({ name: engines.name }).from(engines).where(ne(engines.name, LOCAL_ENGINE)).limit(1);
      wanted = others.length > 0 ? [] : [{ name: LOCAL_ENGINE, dockerUrl: localDockerUrl, advertiseHost: '127.0.0.1' }];
    }
    let changed = false;
    for (const engine of wanted) changed = (await registerOne(tx, engine)) || changed;
    if (changed) await announceEngines(tx);
  });
}

/** Registers the engine or brings its address up to date; answers whether its row changed. */
async function registerOne(tx: Transaction, engine: EngineAddress): Promise<boolean> {
  const describe = (row: EngineAddress) => `${row.dockerUrl}, published on ${row.advertiseHost}`;
  // Another replica starting with the same setting may register it first: then it is updated, if at all.
  const [created] = await tx.insert(engines).values(engine).onConflictDoNothing().returning();
  if (created) {
    await recordEvent(tx, { type: 'engine.registered', subjectKind: 'engine', subjectId: created.name, sandboxId: null, previousStatus: null, status: created.state, statusDetail: describe(created) });
    return true;
  }
  const [current] = await tx.select().from(engines).where(eq(engines.name, engine.name)).for('update');
  if (!current || (current.dockerUrl === engine.dockerUrl && current.advertiseHost === engine.advertiseHost)) return false;
  await tx.update(engines).set({ dockerUrl: engine.dockerUrl, advertiseHost: engine.advertiseHost }).where(eq(engines.name, engine.name));
  await recordEvent(tx, {
    type: 'engine.updated',
    subjectKind: 'engine',
    subjectId: current.name,
    sandboxId: null,
    previousStatus: current.state,
    status: current.state,
    statusDetail: `${describe(engine)} (was ${describe(current)})`,
  });
  return true;
}
