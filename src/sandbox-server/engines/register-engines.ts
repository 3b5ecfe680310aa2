import { eq, ne } from 'drizzle-orm';
import { LOCAL_ENGINE } from '../../contracts/engine.js';
import type { Database, Transaction } from '../db/client.js';
import { engines } from '../db/schema.js';
import { recordEvent } from '../lifecycle-events/record-event.js';
import { announceEngines } from '../services/engines/announce-engines.js';
import { ConfigError } from '../../errors/config-error.js';
import type { EngineAddress } from '../net/engine-address.js';
import { engineOfIdentity, type EngineIdentity, sameEngineMessage } from '../services/engines/engine-identity.js';

/**
 * The engines a control plane brings at start. With DOCKER_ENGINES, each is registered, or its
 * address updated (its state, limits and labels stay as the API set them). Without it, this
 * machine's engine is `local` (its address updated to DOCKER_HOST or the default socket) unless
 * other engines were registered through the API: today's single-engine behaviour, unchanged.
 * A row created records `engine.registered` and a changed address `engine.updated`, as the API
 * does; a restart with the same setting changes nothing and records nothing. Each engine is asked
 * who it is (`identify`, nothing by default), which is recorded and must be no other engine's.
 */
export async function registerConfiguredEngines(
  db: Database,
  configured: readonly EngineAddress[] | undefined,
  localDockerUrl: string,
  identify: EngineIdentity = async () => null,
): Promise<void> {
  let wanted: readonly EngineAddress[] = configured ?? [];
  if (!configured) {
    const others = await db.select({ name: engines.name }).from(engines).where(ne(engines.name, LOCAL_ENGINE)).limit(1);
    wanted = others.length > 0 ? [] : [{ name: LOCAL_ENGINE, dockerUrl: localDockerUrl, advertiseHost: '127.0.0.1' }];
  }
  // Asked before the transaction: an engine slow to answer holds no lock meanwhile.
  const identities = await Promise.all(wanted.map((engine) => identify(engine.dockerUrl)));
  await db.transaction(async (tx) => {
    let changed = false;
    for (const [i, engine] of wanted.entries()) changed = (await registerOne(tx, engine, identities[i] ?? null)) || changed;
    if (changed) await announceEngines(tx);
  });
}

/**
 * Registers the engine or brings its address (and the identity its dockerd reports) up to date; answers
 * whether its row was created or its address changed. A dockerd already registered under another
 * name stops the start (ConfigError): two rows would remove each other's containers as orphans.
 */
async function registerOne(tx: Transaction, engine: EngineAddress, identity: string | null): Promise<boolean> {
  const describe = (row: EngineAddress) => `${row.dockerUrl}, published on ${row.advertiseHost}`;
  const twin = identity === null ? null : await engineOfIdentity(tx, identity, engine.name);
  if (twin !== null) throw new ConfigError(`DOCKER_ENGINES: ${sameEngineMessage(engine.name, twin, identity as string)}`);
  // Another replica starting with the same setting may register it first: then it is updated, if at all.
  const [created] = await tx
    .insert(engines)
    .values({ ...engine, dockerIdentity: identity })
    .onConflictDoNothing({ target: engines.name })
    .returning();
  if (created) {
    await recordEvent(tx, { type: 'engine.registered', subjectKind: 'engine', subjectId: created.name, sandboxId: null, previousStatus: null, status: created.state, statusDetail: describe(created) });
    return true;
  }
  const [current] = await tx.select().from(engines).where(eq(engines.name, engine.name)).for('update');
  if (!current) return false;
  const moved = current.dockerUrl !== engine.dockerUrl || current.advertiseHost !== engine.advertiseHost;
  if (!moved && (identity === null || current.dockerIdentity === identity)) return false;
  await tx
    .update(engines)
    .set({ dockerUrl: engine.dockerUrl, advertiseHost: engine.advertiseHost, dockerIdentity: identity ?? current.dockerIdentity })
    .where(eq(engines.name, engine.name));
  // Learning who its dockerd is is no change an event announces.
  if (!moved) return false;
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
