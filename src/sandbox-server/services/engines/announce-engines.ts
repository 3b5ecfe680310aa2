import { sql } from 'drizzle-orm';
import { ENGINES_CHANNEL } from '../../replicas/hand-off.js';
import type { Transaction } from '../../db/client.js';

/**
 * Tells every replica, once the transaction commits, to read the engines again: a registered
 * engine gets a runtime and a reconciler there, a removed one stops.
 */
export async function announceEngines(tx: Transaction): Promise<void> {
  await tx.execute(sql`select pg_notify(${ENGINES_CHANNEL}, '')`);
}
