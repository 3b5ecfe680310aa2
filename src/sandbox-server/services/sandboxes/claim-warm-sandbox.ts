import { and, asc, eq, inArray, isNotNull, isNull, ne, or } from 'drizzle-orm';
import { engines, type SandboxRow, sandboxes } from '../../db/schema.js';
import { recordEvent } from '../../lifecycle-events/record-event.js';
import type { Transaction } from '../../db/client.js';
import { recordSandboxCreated } from './insert-sandbox.js';

const CLAIMED = 'claimed from the warm pool';

export interface ClaimInput {
  specId: string;
  /** The pool's current fingerprint: members made from an older spec or image are not handed out. */
  fingerprint: string;
  createdByUserId: string | null;
}

/**
 * Hands one ready member of the spec's warm pool to the caller, or returns null when none is ready.
 * One statement picks and takes it: the member is locked with SKIP LOCKED, so a concurrent claim
 * takes another member (or none) instead of waiting for this one, and the update re-checks that it
 * is still unclaimed. Members on an UNREACHABLE, cordoned or draining engine are passed over. From
 * then on it is an ordinary sandbox: visible, counted against the running
 * limit, subject to its spec's idle and TTL rules from now (its creation time is the claim's).
 * Its events commit with the claim: `sandbox.created` (from nothing to RUNNING), since a member's
 * own events were never recorded (reconcile-sandbox.ts), then `sandbox.claimed`.
 */
export async function claimWarmSandbox(tx: Transaction, input: ClaimInput): Promise<SandboxRow | null> {
  const ready = tx
    .select({ id: sandboxes.id })
    .from(sandboxes)
    .innerJoin(engines, eq(engines.name, sandboxes.engine))
    .where(
      and(
        eq(sandboxes.specId, input.specId),
        // A member whose engine stopped answering looks RUNNING still, but would not answer; one on
        // an engine cordoned or draining is being retired (warm-pool/maintain.ts) and its pool refilled elsewhere.
        or(isNull(engines.health), ne(engines.health, 'UNREACHABLE')),
        eq(engines.state, 'ACTIVE'),
        eq(sandboxes.poolFingerprint, input.fingerprint),
        eq(sandboxes.status, 'RUNNING'),
        eq(sandboxes.desiredState, 'RUNNING'),
        isNull(sandboxes.deletedAt),
      ),
    )
    .orderBy(asc(sandboxes.createdAt), asc(sandboxes.id))
    .limit(1)
    .for('update', { of: sandboxes, skipLocked: true });
  const now = new Date();
  const [row] = await tx
    .update(sandboxes)
    .set({ poolFingerprint: null, claimedAt: now, createdAt: now, lastActiveAt: now, updatedAt: now, createdByUserId: input.createdByUserId })
    .where(and(inArray(sandboxes.id, ready), isNotNull(sandboxes.poolFingerprint)))
    .returning();
  if (!row) return null;
  await recordSandboxCreated(tx, row, CLAIMED);
  await recordEvent(tx, {
    type: 'sandbox.claimed',
    subjectKind: 'sandbox',
    subjectId: row.id,
    sandboxId: row.id,
    previousStatus: row.status,
    status: row.status,
    statusDetail: CLAIMED,
  });
  return row;
}
