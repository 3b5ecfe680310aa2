import { ConflictError } from '../../../errors/index.js';
import { dataVolumeNameFor } from '../../runtime/resource-names.js';
import { type SandboxRow, snapshots } from '../../db/schema.js';
import { recordEvent } from '../../lifecycle-events/record-event.js';
import type { SnapshotInfo } from '../../models/snapshot.js';
import type { SnapshotProgress } from '../../runtime/runtime.js';
import type { ServiceContext } from '../context.js';
import { findLiveSandbox } from '../sandboxes/find-sandbox.js';
import { newSandboxId } from '../sandboxes/new-ids.js';
import { onEngine } from './engine-error.js';
import { toSnapshotInfo } from './snapshot-view.js';

export interface TakeSnapshotInput {
  sandboxId: string;
  name?: string | null;
}

/**
 * Snapshots a RUNNING or PAUSED sandbox: its container's files and its data volume, at one instant
 * (the runtime pauses a running container only for the commit and the copy of what changed since
 * a first copy made while it ran). One holding more than SNAPSHOT_MAX_MB is refused (422) first.
 * Each phase the runtime reports is a `snapshot.progress` event of the new id as it ends. The reconciler
 * leaves the sandbox alone meanwhile; the row and its `snapshot.created` event are written before
 * it looks again, so the sweep of unclaimed snapshot artifacts never sees this one unclaimed.
 * Unknown sandbox: 404; deleted, or not RUNNING or PAUSED (no container yet, or a broken one): 409.
 */
export async function takeSnapshot(ctx: ServiceContext, input: TakeSnapshotInput): Promise<SnapshotInfo> {
  // Refused before the hold, at once: taking it waits for a reconciler's pass, up to 30 s.
  assertSnapshotable(await findLiveSandbox(ctx.db, input.sandboxId));
  return ctx.snapshots.hold(input.sandboxId, async () => {
    // Read again under the hold: the state it had before the hold may have changed.
    const sandbox = await findLiveSandbox(ctx.db, input.sandboxId);
    assertSnapshotable(sandbox);
    const id = newSandboxId();
    const artifacts = await onEngine('Snapshot', () =>
      ctx.snapshots.runtimeOf(sandbox.engine).snapshot({
        snapshotId: id,
        sandboxId: sandbox.id,
        specId: sandbox.specId,
        containerId: sandbox.containerId as string,
        dataVolume: dataVolumeNameFor(sandbox.id),
        maxBytes: ctx.snapshots.maxMb === undefined ? undefined : ctx.snapshots.maxMb * 1024 * 1024,
        onProgress: (progress) => recordProgress(ctx, id, sandbox.id, progress),
      }),
    );
    try {
      return await ctx.db.transaction(async (tx) => {
        const [row] = await tx
          .insert(snapshots)
          .values({ id, name: input.name ?? null, sandboxId: sandbox.id, specId: sandbox.specId, engine: sandbox.engine, ...artifacts })
          .returning();
        if (!row) throw new Error('insert returned no row');
        await recordEvent(tx, {
          type: 'snapshot.created',
          subjectKind: 'snapshot',
          subjectId: row.id,
          sandboxId: sandbox.id,
          previousStatus: null,
          status: null,
          statusDetail: null,
        });
        return toSnapshotInfo(row);
      });
    } catch (error) {
      // Unclaimed, they would be swept anyway; removing them now frees the space at once.
      await ctx.snapshots.runtimeOf(sandbox.engine).removeSnapshot(artifacts).catch(() => undefined);
      throw error;
    }
  });
}

/**
 * A `snapshot.progress` event, committed at once in its own transaction, so that a follower of
 * the events sees a long snapshot advance: `status` the phase, `status_detail` its bytes.
 */
async function recordProgress(ctx: ServiceContext, snapshotId: string, sandboxId: string, progress: SnapshotProgress): Promise<void> {
  await ctx.db.transaction((tx) =>
    recordEvent(tx, {
      type: 'snapshot.progress',
      subjectKind: 'snapshot',
      subjectId: snapshotId,
      sandboxId,
      previousStatus: null,
      status: progress.phase,
      statusDetail: progress.bytes === undefined ? null : `${progress.bytes} bytes`,
    }),
  );
}

function assertSnapshotable(sandbox: SandboxRow): void {
  const snapshotable = (sandbox.status === 'RUNNING' || sandbox.status === 'PAUSED') && sandbox.containerId !== null;
  if (!snapshotable) throw new ConflictError(`Sandbox is ${sandbox.status}; only a RUNNING or PAUSED sandbox can be snapshotted`);
}
