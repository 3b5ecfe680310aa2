import { eq } from 'drizzle-orm';
import { ConflictError, NotFoundError } from '../../../errors/index.js';
import type { Database } from '../../db/client.js';
import { type SandboxRow, sandboxes } from '../../db/schema.js';
import type { Transaction } from '../context.js';

/**
 * The row of a sandbox that has not been deleted: 404 when there is none, 409 when it was deleted
 * (it stays in the table so the reconciler can finish removing it). `forUpdate` locks the row
 * until the end of the transaction.
 */
export async function findLiveSandbox(db: Database | Transaction, id: string, options: { forUpdate?: boolean } = {}): Promise<SandboxRow> {
  const query = db.select().from(sandboxes).where(eq(sandboxes.id, id));
  const [row] = options.forUpdate ? await query.for('update') : await query;
  if (!row) throw new NotFoundError('Sandbox not found');
  if (row.desiredState === 'DELETED') throw new ConflictError('Sandbox has been deleted');
  return row;
}
