import { and, eq, isNull } from 'drizzle-orm';
import { NotFoundError, validationError } from '../../../errors/index.js';
import { agentTargetOf } from '../../agent-client.js';
import { dataVolumeNameFor } from '../../runtime/resource-names.js';
import { type SnapshotRow, sandboxSpecs, snapshots } from '../../db/schema.js';
import { refuseUnbuiltSpec } from '../sandbox-specs/spec-build.js';
import type { SandboxInfo } from '../../models/sandbox.js';
import type { ServiceContext } from '../context.js';
import { onEngine } from '../snapshots/engine-error.js';
import { claimWarmSandbox } from './claim-warm-sandbox.js';
import { insertSandbox } from './insert-sandbox.js';
import { newSandboxId } from './new-ids.js';
import { placeSandbox } from './place-sandbox.js';
import { lockRunningLimit, makeRoomForOneMore } from './running-limit.js';
import { toSandboxInfo } from './sandbox-info.js';

export interface StartSandboxInput {
  /** Absent: the default spec, or the snapshot's. */
  specId?: string;
  /** Start from this snapshot: its image, and a copy of its data volume. */
  snapshotId?: string;
  createdByUserId?: string | null;
}

/**
 * Hands out a ready member of the spec's warm pool (status RUNNING, with its session key and URLs)
 * when there is one and no snapshot is asked for; otherwise places a new sandbox on an engine
 * (place-sandbox.ts: 503 when none can take it), records it wanted RUNNING and returns it at once
 * (status STARTING), and its engine's reconciler creates the container. Unknown spec: 404, nothing
 * written.
 *
 * From a snapshot, the new sandbox's data volume is first copied from the snapshot's (so the
 * agent-server finds the same conversations and event ids at start), then the row is written with
 * the snapshot's image and spec; a different spec is a 422. The copy is made before the row so that
 * no row ever points at half a volume; a copy no row claims (the snapshot was deleted meanwhile) is
 * removed again.
 */
export async function startSandbox(ctx: ServiceContext, input: StartSandboxInput): Promise<SandboxInfo> {
  const id = newSandboxId();
  let snapshot: SnapshotRow | undefined;
  if (input.snapshotId !== undefined) {
    [snapshot] = await ctx.db.select().from(snapshots).where(eq(snapshots.id, input.snapshotId));
    if (!snapshot) throw new NotFoundError('Snapshot not found');
    if (input.specId !== undefined && input.specId !== snapshot.specId) {
      throw validationError('body', ['sandbox_spec_id'], `differs from the snapshot's sandbox spec ${snapshot.specId}`);
    }
    const from = snapshot;
    await onEngine('Copying the snapshot', () => ctx.snapshots.runtimeOf(from.engine).restoreVolume(from, { sandboxId: id, name: dataVolumeNameFor(id) }));
  }
  try {
    return await claimOrInsert(ctx, id, { ...input, specId: snapshot?.specId ?? input.specId }, snapshot);
  } catch (error) {
    if (snapshot) await ctx.snapshots.runtimeOf(snapshot.engine).removeVolume(dataVolumeNameFor(id)).catch(() => undefined);
    throw error;
  }
}

async function claimOrInsert(ctx: ServiceContext, id: string, input: StartSandboxInput, snapshot: SnapshotRow | undefined): Promise<SandboxInfo> {
  const seen = ctx.knownTargets?.mark();
  const { row, paused, pooled, claimed } = await ctx.db.transaction(async (tx) => {
    // Held until this sandbox is committed, so a concurrent delete of the snapshot sees it and refuses.
    if (snapshot) {
      const [still] = await tx.select({ id: snapshots.id }).from(snapshots).where(eq(snapshots.id, snapshot.id)).for('share');
      if (!still) throw new NotFoundError('Snapshot not found');
    }
    await lockRunningLimit(tx);
    // FOR SHARE holds off a concurrent delete of the spec until this sandbox is committed, so the
    // delete then sees it and refuses.
    const [spec] = await tx
      .select({
        id: sandboxSpecs.id,
        warmPoolSize: sandboxSpecs.warmPoolSize,
        warmPoolFingerprint: sandboxSpecs.warmPoolFingerprint,
        engineLabels: sandboxSpecs.engineLabels,
        buildStatus: sandboxSpecs.buildStatus,
        buildDetail: sandboxSpecs.buildDetail,
      })
      .from(sandboxSpecs)
      .where(
        and(
          input.specId === undefined ? eq(sandboxSpecs.isDefault, true) : eq(sandboxSpecs.id, input.specId),
          isNull(sandboxSpecs.deletedAt),
        ),
      )
      .for('share');
    if (!spec) throw new NotFoundError('Sandbox spec not found');
    refuseUnbuiltSpec(spec);
    const paused = await makeRoomForOneMore(tx, ctx.maxRunningSandboxes);
    // A start from a snapshot needs its own data volume: it is never served from the pool.
    const pooled = spec.warmPoolSize > 0 && !snapshot;
    const fingerprint = spec.warmPoolFingerprint;
    const claimed = pooled && fingerprint
      ? await claimWarmSandbox(tx, { specId: spec.id, fingerprint, createdByUserId: input.createdByUserId ?? null })
      : null;
    if (claimed) return { row: claimed, paused, pooled, claimed: true };
    // From a snapshot, on the engine holding its volume copy; otherwise wherever placement says.
    const engine = await placeSandbox(tx, spec.engineLabels, snapshot?.engine);
    const row = await insertSandbox(
      tx,
      { id, specId: spec.id, engine, snapshotId: snapshot?.id ?? null, image: snapshot?.image ?? null, createdByUserId: input.createdByUserId ?? null },
      null,
    );
    return { row, paused, pooled, claimed: false };
  });
  if (pooled) {
    ctx.countWarmPoolClaim?.(row.specId, claimed);
    ctx.reconciler.refillWarmPools?.();
  }
  // A claim changes no desired state: the member runs as its reconciler last saw it, so there is
  // nothing to kick it for, and its target, read in the claim, is known before the first request.
  const target = claimed ? agentTargetOf(row) : null;
  if (target && seen !== undefined) ctx.knownTargets?.remember(row.id, target, seen);
  else ctx.reconciler.kick(row.id, row.engine);
  for (const id of paused) ctx.reconciler.kick(id);
  return toSandboxInfo(row);
}
