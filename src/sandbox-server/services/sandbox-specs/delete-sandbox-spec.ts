import { and, count, eq, isNotNull, isNull, ne } from 'drizzle-orm';
import { ConflictError, NotFoundError } from '../../../errors/index.js';
import { logger } from '../../../logger.js';
import { sandboxes, sandboxSpecs, snapshots } from '../../db/schema.js';
import type { ServiceContext } from '../context.js';
import { deleteSnapshotRows, removeSnapshotArtifacts } from '../snapshots/remove-snapshots.js';
import { notInWarmPool } from '../sandboxes/find-sandbox.js';

/**
 * Deletes a spec no live sandbox uses (its unclaimed warm-pool members go with it), and its snapshots (each with its `snapshot.deleted` event;
 * their images and volumes are removed after the commit). The default spec cannot be deleted
 * (sandboxes started without a spec need it). The row is kept, marked deleted, because deleted
 * sandboxes still reference it.
 */
export async function deleteSandboxSpec(ctx: ServiceContext, id: string): Promise<void> {
  const swept = await ctx.db.transaction(async (tx) => {
    // The row lock waits for a start that holds the spec FOR SHARE, so the count below sees it.
    const [spec] = await tx
      .select({ isDefault: sandboxSpecs.isDefault })
      .from(sandboxSpecs)
      .where(and(eq(sandboxSpecs.id, id), isNull(sandboxSpecs.deletedAt)))
      .for('update');
    if (!spec) throw new NotFoundError('Sandbox spec not found');
    if (spec.isDefault) throw new ConflictError('The default sandbox spec cannot be deleted');
    const [usage] = await tx
      .select({ live: count() })
      .from(sandboxes)
      .where(and(eq(sandboxes.specId, id), ne(sandboxes.desiredState, 'DELETED'), notInWarmPool));
    const live = usage?.live ?? 0;
    if (live > 0) throw new ConflictError(`Sandbox spec is used by ${live} sandbox${live === 1 ? '' : 'es'}; delete them first`);
    const specSnapshots = await tx.select().from(snapshots).where(eq(snapshots.specId, id));
    await tx.update(sandboxSpecs).set({ deletedAt: new Date() }).where(eq(sandboxSpecs.id, id));
    await deleteSnapshotRows(tx, specSnapshots);
    const retired = await tx
      .update(sandboxes)
      .set({ desiredState: 'DELETED', updatedAt: new Date() })
      .where(and(eq(sandboxes.specId, id), isNotNull(sandboxes.poolFingerprint), ne(sandboxes.desiredState, 'DELETED')))
      .returning({ id: sandboxes.id });
    return { specSnapshots, retired };
  });
  for (const { id: sandboxId } of swept.retired) ctx.reconciler.kick(sandboxId);
  await removeSnapshotArtifacts(ctx.snapshots, swept.specSnapshots, logger.child({ component: 'snapshots' }));
}
