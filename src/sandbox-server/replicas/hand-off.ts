import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import type { Logger } from '../../logger.js';

/**
 * NOTIFY channels on which a replica hands a lease holder the work only it does: a kick of an
 * engine's reconciler (payload `engine/sandbox-id`, `engine/` for all of the engine's sandboxes,
 * empty for every engine's) and a start task to run (its id; the `control-plane` lease's work).
 */
export const KICK_CHANNEL = 'sandbox_server_kick';
export const START_TASK_CHANNEL = 'sandbox_server_start_task';
/** Asks the `control-plane` lease holder to top the warm pools up (after a claim). */
export const WARM_POOLS_CHANNEL = 'sandbox_server_warm_pools';
/** Sent in the transaction that registers, changes or removes an engine: every replica reads the engines again. */
export const ENGINES_CHANNEL = 'sandbox_server_engines';

/**
 * Sends `payload` to the lease holder, without waiting. A notification lost (the database away)
 * delays the work until the holder's next sweep or reconnection, which look at everything.
 */
export function handOff(db: Database, channel: string, payload: string, log: Logger): void {
  db.execute(sql`select pg_notify(${channel}, ${payload})`).catch((err: unknown) => log.warn({ err, channel }, 'hand-off to the lease holder failed'));
}
