import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import type { Logger } from '../../logger.js';

/**
 * NOTIFY channels on which a replica hands the lease holder the work only it does: a reconciler
 * kick (payload: the sandbox id, empty for every sandbox) and a start task to run (its id).
 */
export const KICK_CHANNEL = 'sandbox_server_kick';
export const START_TASK_CHANNEL = 'sandbox_server_start_task';

/**
 * Sends `payload` to the lease holder, without waiting. A notification lost (the database away)
 * delays the work until the holder's next sweep or reconnection, which look at everything.
 */
export function handOff(db: Database, channel: string, payload: string, log: Logger): void {
  db.execute(sql`select pg_notify(${channel}, ${payload})`).catch((err: unknown) => log.warn({ err, channel }, 'hand-off to the lease holder failed'));
}
