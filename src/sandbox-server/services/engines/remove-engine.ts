import { and, eq, isNull } from 'drizzle-orm';
import { ConflictError, NotFoundError } from '../../../errors/index.js';
import { engines, sandboxes, snapshots } from '../../db/schema.js';
import { recordEvent } from '../../lifecycle-events/record-event.js';
import type { ServiceContext } from '../context.js';
import { announceEngines } from './announce-engines.js';

/**
 * Removes an engine that holds nothing: no live sandbox (a deleted one whose container is still
 * being removed counts as live) and no snapshot; else 409 saying what is left. Its deleted sandboxes'
 * rows go with it. The engine row is locked first, so a placement cannot add a sandbox meanwhile.
 * Every replica stops its reconciler and gives its lease up. Unknown engine: 404.
 */
export async function removeEngine(ctx: ServiceContext, name: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const [row] = await tx.select().from(engines).where(eq(engines.name, name)).for('update');
    if (!row) throw new NotFoundError('Engine not found');
    const live = await tx
      .select({ id: sandboxes.id })
      .from(sandboxes)
      .where(and(eq(sandboxes.engine, name), isNull(sandboxes.deletedAt)))
      .limit(1);
    if (live.length > 0) throw new ConflictError(`Engine ${name} still has sandboxes; delete or move them first`);
    const kept = await tx.select({ id: snapshots.id }).from(snapshots).where(eq(snapshots.engine, name)).limit(1);
    if (kept.length > 0) throw new ConflictError(`Engine ${name} still holds snapshots; delete them first`);
    await tx.delete(sandboxes).where(eq(sandboxes.engine, name));
    await tx.delete(engines).where(eq(engines.name, name));
    await announceEngines(tx);
    await recordEvent(tx, {
      type: 'engine.removed',
      subjectKind: 'engine',
      subjectId: name,
      sandboxId: null,
      previousStatus: row.state,
      status: null,
      statusDetail: null,
    });
  });
}
