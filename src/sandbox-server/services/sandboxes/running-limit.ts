import { and, asc, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import { sandboxes } from '../../db/schema.js';
import type { Transaction } from '../../db/client.js';

/**
 * Serialises every change that adds a sandbox wanted running (start, resume) until the end of the
 * transaction. Without it two parallel starts could each count max-1 running sandboxes, each pause
 * nothing, and together exceed the limit. Pauses and deletes only lower the count and need no lock.
 */
export async function lockRunningLimit(tx: Transaction): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('sandbox-server.running-limit'))`);
}

/**
 * Makes room for one more sandbox wanted running by setting the least recently used ones (by
 * lastActiveAt) to desired PAUSED. Unclaimed warm-pool members neither count nor get paused: they
 * have their own cap (MAX_WARM_SANDBOXES). Call after lockRunningLimit, in the transaction that then adds
 * the sandbox. Returns the ids it paused, for the caller to kick once committed.
 */
export async function makeRoomForOneMore(tx: Transaction, maxRunning: number, exceptId?: string): Promise<string[]> {
  const wantedRunning = and(eq(sandboxes.desiredState, 'RUNNING'), isNull(sandboxes.poolFingerprint));
  const running = await tx
    .select({ id: sandboxes.id })
    .from(sandboxes)
    .where(exceptId === undefined ? wantedRunning : and(wantedRunning, ne(sandboxes.id, exceptId)))
    .orderBy(asc(sandboxes.lastActiveAt), asc(sandboxes.createdAt), asc(sandboxes.id));
  const excess = running.length - (maxRunning - 1);
  if (excess <= 0) return [];
  const victims = running.slice(0, excess).map((row) => row.id);
  // Re-checked in the update: a pause or delete committed since the select must not be overwritten
  // (a deleted sandbox would come back as paused); such a sandbox no longer counts anyway.
  const paused = await tx
    .update(sandboxes)
    .set({ desiredState: 'PAUSED', updatedAt: new Date() })
    .where(and(inArray(sandboxes.id, victims), wantedRunning))
    .returning({ id: sandboxes.id });
  return paused.map((row) => row.id);
}
