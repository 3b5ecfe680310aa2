import { inArray } from 'drizzle-orm';
import type { Logger } from '../../../logger.js';
import { type SnapshotRow, snapshots } from '../../db/schema.js';
import { recordEvent } from '../../lifecycle-events/record-event.js';
import type { Transaction } from '../../db/client.js';
import type { SnapshotEngine } from '../context.js';

/** Deletes snapshot rows, each with its `snapshot.deleted` event, in the caller's transaction. */
export async function deleteSnapshotRows(tx: Transaction, rows: readonly SnapshotRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.delete(snapshots).where(
    inArray(
      snapshots.id,
      rows.map((row) => row.id),
    ),
  );
  for (const row of rows) {
    await recordEvent(tx, {
      type: 'snapshot.deleted',
      subjectKind: 'snapshot',
      subjectId: row.id,
      sandboxId: row.sandboxId,
      previousStatus: null,
      status: null,
      statusDetail: null,
    });
  }
}

/**
 * Removes deleted snapshots' images and volumes from the engine once their rows are gone. A failure
 * (the engine is away, a container being removed still holds the image) is only logged: the
 * reconciler's sweep removes what no row claims.
 */
export async function removeSnapshotArtifacts(engine: SnapshotEngine, rows: readonly SnapshotRow[], log: Logger): Promise<void> {
  for (const row of rows) {
    try {
      await engine.runtimeOf(row.engine).removeSnapshot(row);
    } catch (error) {
      log.warn({ snapshotId: row.id, err: error }, 'could not remove a deleted snapshot yet; the sweep will');
    }
  }
}
