import { lt } from 'drizzle-orm';
import type { Logger } from '../../logger.js';
import type { Database } from '../db/client.js';
import { lifecycleEvents } from '../db/schema.js';

/** Removes events older than `cutoff`; returns how many. */
export async function deleteEventsBefore(db: Database, cutoff: Date): Promise<number> {
  const deleted = await db.delete(lifecycleEvents).where(lt(lifecycleEvents.createdAt, cutoff)).returning({ id: lifecycleEvents.id });
  return deleted.length;
}

/**
 * Keeps the event log to `retentionMs`: a sweep at start, then every `intervalMs`. Several replicas
 * sweeping at once is harmless: the delete is idempotent. Returns the stop function.
 */
export function keepEventsFor(options: { db: Database; retentionMs: number; intervalMs: number; log: Logger }): () => void {
  const sweep = async () => {
    try {
      const deleted = await deleteEventsBefore(options.db, new Date(Date.now() - options.retentionMs));
      if (deleted > 0) options.log.info({ deleted }, 'expired lifecycle events removed');
    } catch (err) {
      options.log.warn({ err }, 'lifecycle event retention sweep failed');
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), options.intervalMs).unref();
  return () => clearInterval(timer);
}
