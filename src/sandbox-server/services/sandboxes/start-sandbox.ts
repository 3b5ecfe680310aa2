import { and, eq, isNull } from 'drizzle-orm';
import { NotFoundError } from '../../../errors/index.js';
import { sandboxes, sandboxSpecs } from '../../db/schema.js';
import { recordEvent } from '../../lifecycle-events/record-event.js';
import type { SandboxInfo } from '../../models/sandbox.js';
import type { ServiceContext } from '../context.js';
import { newSandboxId, newSessionApiKey } from './new-ids.js';
import { lockRunningLimit, makeRoomForOneMore } from './running-limit.js';
import { toSandboxInfo } from './sandbox-info.js';

export interface StartSandboxInput {
  /** Absent: the default spec. */
  specId?: string;
  createdByUserId?: string | null;
}

/**
 * Records a new sandbox wanted RUNNING and returns it at once (status STARTING); the reconciler
 * creates the container. Unknown spec: 404, nothing written.
 */
export async function startSandbox(ctx: ServiceContext, input: StartSandboxInput): Promise<SandboxInfo> {
  const { row, paused } = await ctx.db.transaction(async (tx) => {
    await lockRunningLimit(tx);
    // FOR SHARE holds off a concurrent delete of the spec until this sandbox is committed, so the
    // delete then sees it and refuses.
    const [spec] = await tx
      .select({ id: sandboxSpecs.id })
      .from(sandboxSpecs)
      .where(
        and(
          input.specId === undefined ? eq(sandboxSpecs.isDefault, true) : eq(sandboxSpecs.id, input.specId),
          isNull(sandboxSpecs.deletedAt),
        ),
      )
      .for('share');
    if (!spec) throw new NotFoundError('Sandbox spec not found');
    const paused = await makeRoomForOneMore(tx, ctx.maxRunningSandboxes);
    const now = new Date();
    const [row] = await tx
      .insert(sandboxes)
      .values({
        id: newSandboxId(),
        specId: spec.id,
        createdByUserId: input.createdByUserId ?? null,
        desiredState: 'RUNNING',
        status: 'STARTING',
        sessionApiKey: newSessionApiKey(),
        lastActiveAt: now,
        updatedAt: now,
      })
      .returning();
    if (!row) throw new Error('insert returned no row');
    await recordEvent(tx, {
      type: 'sandbox.created',
      subjectKind: 'sandbox',
      subjectId: row.id,
      sandboxId: row.id,
      previousStatus: null,
      status: row.status,
      statusDetail: null,
    });
    return { row, paused };
  });
  for (const id of paused) ctx.reconciler.kick(id);
  ctx.reconciler.kick(row.id);
  return toSandboxInfo(row);
}
