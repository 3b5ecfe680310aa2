import { and, eq, isNull } from 'drizzle-orm';
import { ConflictError, NotFoundError } from '../../../errors/index.js';
import type { Database, Transaction } from '../../db/client.js';
import { type SandboxRow, sandboxes } from '../../db/schema.js';

/**
 * Unclaimed warm-pool members are hidden from the API: no listing, lookup, proxy or verb sees them
 * until a start claims one (they show only as counts, in the spec's `warm_pool_ready` and /metrics).
 * Every service query of sandboxes by id or by listing adds this condition.
 */
export const notInWarmPool = isNull(sandboxes.poolFingerprint);

/**
 * The row of a sandbox that has not been deleted: 404 when there is none (or it is an unclaimed
 * warm-pool member), 409 when it was deleted (it stays in the table so the reconciler can finish
 * removing it). `forUpdate` locks the row until the end of the transaction.
 */
export async function findLiveSandbox(db: Database | Transaction, id: string, options: { forUpdate?: boolean } = {}): Promise<SandboxRow> {
  const query = db.select().from(sandboxes).where(and(eq(sandboxes.id, id), notInWarmPool));
  const [row] = options.forUpdate ? await query.for('update') : await query;
  if (!row) throw new NotFoundError('Sandbox not found');
  if (row.desiredState === 'DELETED') throw new ConflictError('Sandbox has been deleted');
  return row;
}
