import { and, count, eq, isNull } from 'drizzle-orm';
import { ConflictError, NotFoundError } from '../../../errors/index.js';
import { logger } from '../../../logger.js';
import { sandboxes, snapshots } from '../../db/schema.js';
import type { ServiceContext } from '../context.js';
import { deleteSnapshotRows, removeSnapshotArtifacts } from './remove-snapshots.js';

/**
 * Deletes a snapshot no sandbox started from it still has: those run its image for their whole life
 * (a resume after ERROR creates a new container from it), so deleting it under them is a 409, as
 * `docker rmi` refuses an image in use; a deleted one counts until its container is gone. A start
 * from the snapshot holds its row FOR SHARE until the new sandbox is committed, so the count here
 * sees every one.
 */
export async function deleteSnapshot(ctx: ServiceContext, id: string): Promise<void> {
  const row = await ctx.db.transaction(async (tx) => {
    const [found] = await tx.select().from(snapshots).where(eq(snapshots.id, id)).for('update');
    if (!found) throw new NotFoundError('Snapshot not found');
    const [usage] = await tx
      .select({ live: count() })
      .from(sandboxes)
      .where(and(eq(sandboxes.snapshotId, id), isNull(sandboxes.deletedAt)));
    const live = usage?.live ?? 0;
    if (live > 0) {
      throw new ConflictError(`Snapshot is used by ${live} sandbox${live === 1 ? '' : 'es'} started from it; delete them first (and let their removal finish)`);
    }
    await deleteSnapshotRows(tx, [found]);
    return found;
  });
  await removeSnapshotArtifacts(ctx.snapshots, [row], logger.child({ component: 'snapshots' }));
}
