import { and, eq, ne } from 'drizzle-orm';
import { NotFoundError } from '../../../errors/index.js';
import { brokeredSecrets, sandboxes } from '../../db/schema.js';
import type { ServiceContext } from '../context.js';
import { notInWarmPool } from './find-sandbox.js';

/**
 * Wants the sandbox DELETED; the reconciler removes its container and data volume. The row stays
 * (see the schema). Deleting a deleted sandbox succeeds again, so a client may retry a DELETE
 * whose answer it lost; an id never seen is a 404.
 */
export async function deleteSandbox(ctx: ServiceContext, id: string): Promise<void> {
  const updated = await ctx.db.transaction(async (tx) => {
    const marked = await tx
      .update(sandboxes)
      .set({ desiredState: 'DELETED', updatedAt: new Date() })
      .where(and(eq(sandboxes.id, id), ne(sandboxes.desiredState, 'DELETED'), notInWarmPool))
      .returning({ id: sandboxes.id });
    // Its conversations' brokered secrets have nowhere left to go.
    if (marked.length > 0) await tx.delete(brokeredSecrets).where(eq(brokeredSecrets.sandboxId, id));
    return marked;
  });
  if (updated.length === 0) {
    const [existing] = await ctx.db.select({ id: sandboxes.id }).from(sandboxes).where(and(eq(sandboxes.id, id), notInWarmPool));
    if (!existing) throw new NotFoundError('Sandbox not found');
    return;
  }
  ctx.reconciler.kick(id);
}
