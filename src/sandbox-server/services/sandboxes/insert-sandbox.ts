import { type SandboxRow, sandboxes } from '../../db/schema.js';
import { recordEvent } from '../../lifecycle-events/record-event.js';
import type { Transaction } from '../../db/client.js';
import { newSessionApiKey } from './new-ids.js';

/** What differs between new sandboxes; the rest (wanted RUNNING, status STARTING, a fresh session key) is common. */
export type NewSandboxValues = Pick<
  typeof sandboxes.$inferInsert,
  'id' | 'specId' | 'engine' | 'snapshotId' | 'image' | 'createdByUserId' | 'poolFingerprint'
>;

/**
 * Records a new sandbox wanted RUNNING, for the reconciler to create, and its `sandbox.created`
 * event in the same transaction, so neither commits without the other. A warm-pool member (one with
 * a pool fingerprint) gets no event: it is nobody's sandbox until a start claims it, and its claim
 * records `sandbox.created` then (claim-warm-sandbox.ts).
 */
export async function insertSandbox(tx: Transaction, values: NewSandboxValues, statusDetail: string | null): Promise<SandboxRow> {
  const now = new Date();
  const [row] = await tx
    .insert(sandboxes)
    .values({
      ...values,
      desiredState: 'RUNNING',
      status: 'STARTING',
      sessionApiKey: newSessionApiKey(),
      lastActiveAt: now,
      updatedAt: now,
    })
    .returning();
  if (!row) throw new Error('insert returned no row');
  if (row.poolFingerprint !== null) return row;
  await recordSandboxCreated(tx, row, statusDetail);
  return row;
}

/** The `sandbox.created` event of a sandbox the caller can now see: a new one, or a claimed pool member. */
export async function recordSandboxCreated(tx: Transaction, row: SandboxRow, statusDetail: string | null): Promise<void> {
  await recordEvent(tx, {
    type: 'sandbox.created',
    subjectKind: 'sandbox',
    subjectId: row.id,
    sandboxId: row.id,
    previousStatus: null,
    status: row.status,
    statusDetail,
  });
}
