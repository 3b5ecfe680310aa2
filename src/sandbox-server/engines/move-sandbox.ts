import type Docker from 'dockerode';
import { and, eq, isNotNull, isNull, lte, ne, or, sql } from 'drizzle-orm';
import type { Logger } from '../../logger.js';
import type { Database } from '../db/client.js';
import { engines, type SandboxRow, sandboxes, sandboxSpecs, snapshots } from '../db/schema.js';
import { recordEvent } from '../lifecycle-events/record-event.js';
import { dataVolumeNameFor } from '../runtime/resource-names.js';
import { LABEL_SNAPSHOT_ID, LABEL_SPEC_ID, type SandboxRuntime } from '../runtime/runtime.js';
import { newSandboxId } from '../services/sandboxes/new-ids.js';
import { placeSandbox } from '../services/sandboxes/place-sandbox.js';
import { copySnapshot } from './copy-snapshot.js';

/** What a move needs of the two engines and of the replica running it (the holder of the source's lease). */
export interface MoveContext {
  db: Database;
  instanceId: string;
  /** The installation the copies on the target are labelled with (see ownerLabels). */
  installationId?: string;
  /** The trusted image volume-copy helpers run (the agent-server image, on every engine). */
  helperImage: string;
  log: Logger;
  runtimeOf(engine: string): SandboxRuntime;
  dockerOf(engine: string): Docker;
  /** Keeps the source engine's reconciler off the sandbox while `work` runs. */
  hold<T>(sandboxId: string, work: () => Promise<T>): Promise<T>;
  kick(sandboxId: string): void;
}

/**
 * The sandboxes a drain moves now, of specs that allow it, each with a container to snapshot:
 * paused ones, and running ones idle since `idleSince` (no request through the control plane since,
 * as idle auto-pause judges it). Warm-pool members are not anyone's, and are not moved: the pools
 * retire and replace them (warm-pool/maintain.ts).
 */
export function movable(idleSince: Date) {
  return and(
    isNotNull(sandboxes.containerId),
    isNull(sandboxes.poolFingerprint),
    or(
      and(eq(sandboxes.desiredState, 'PAUSED'), eq(sandboxes.status, 'PAUSED')),
      and(eq(sandboxes.desiredState, 'RUNNING'), eq(sandboxes.status, 'RUNNING'), lte(sandboxes.lastActiveAt, idleSince)),
    ),
  );
}

export type MoveOutcome = { moved: true; to: string } | { moved: false; why: string };

/**
 * Moves one paused or idle running sandbox off engine `from`, keeping its id, session key, files
 * (the container's and its /data volume: the conversations' events), its lifecycle history and its
 * desired state:
 *
 * 0. under a hold, a running one is paused (`sandbox.paused`), unless a request came meanwhile;
 * 1. snapshot it on the source (runtime.snapshot, as a user's snapshot is taken);
 * 2. copy the snapshot's image and volume to the target (copySnapshot), and restore the sandbox's
 *    data volume from it there;
 * 3. in one transaction, with the target's row locked by placement (so it is not overfilled),
 *    record the snapshot on the target and re-point the sandbox at it (engine, image, no container
 *    yet), only if it is still this engine's, with the same container, and not being deleted, with
 *    a `sandbox.moved` event;
 * 4. remove the source's container, data volume, network and snapshot.
 *
 * The sandbox is PAUSED with no container on the target. One wanted PAUSED stays so: resuming it
 * creates a container from the snapshot's image on the moved volume, as after any start from a
 * snapshot. One wanted RUNNING (it was running, or was resumed during the move) is started so at
 * once by the target's reconciler; requests that came meanwhile wait for it, as for any resume.
 * A failure before step 3 leaves the sandbox where it was, and its reconciler brings it back to its
 * desired state (unpausing one the move paused); the target's copies carry snapshot labels no row
 * claims, and the target's sweep removes them. After step 3, the source's leftovers are its sweep's.
 */
export async function moveSandbox(ctx: MoveContext, sandboxId: string, from: string, idleSince: Date): Promise<MoveOutcome> {
  const target = await ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .select({ labels: sandboxSpecs.engineLabels })
      .from(sandboxes)
      .innerJoin(sandboxSpecs, eq(sandboxSpecs.id, sandboxes.specId))
      .where(eq(sandboxes.id, sandboxId));
    return placeSandbox(tx, row?.labels ?? {}).catch((error: unknown) => ({ refused: error instanceof Error ? error.message : String(error) }));
  });
  if (typeof target !== 'string') return { moved: false, why: target.refused };

  return ctx.hold(sandboxId, async () => {
    const [row] = await ctx.db
      .select()
      .from(sandboxes)
      .where(and(eq(sandboxes.id, sandboxId), eq(sandboxes.engine, from), movable(idleSince)));
    if (!row) return { moved: false, why: 'it is no longer a paused or idle sandbox of this engine' };
    const source = ctx.runtimeOf(from);
    if (row.status === 'RUNNING' && !(await pauseToMove(ctx, source, row, target, idleSince))) {
      return { moved: false, why: 'a request came in as it was being paused' };
    }
    const snapshotId = newSandboxId();
    const artifacts = await source.snapshot({
      snapshotId,
      sandboxId,
      specId: row.specId,
      containerId: row.containerId as string,
      dataVolume: dataVolumeNameFor(sandboxId),
    });
    try {
      await copySnapshot(
        {
          from: ctx.dockerOf(from),
          to: ctx.dockerOf(target),
          helperImage: ctx.helperImage,
          instanceId: ctx.instanceId,
          installationId: ctx.installationId,
          onProgress: (line) => ctx.log.info({ sandboxId, from, to: target }, line),
        },
        { id: snapshotId, image: artifacts.image, volume: artifacts.volume, volumeLabels: { [LABEL_SNAPSHOT_ID]: snapshotId, [LABEL_SPEC_ID]: row.specId } },
      );
      const snapshot = { id: snapshotId, image: artifacts.image, volume: artifacts.volume };
      await ctx.runtimeOf(target).restoreVolume(snapshot, { sandboxId, name: dataVolumeNameFor(sandboxId) });
      const repointed = await repoint(ctx, row, target, { ...snapshot, sizeBytes: artifacts.sizeBytes });
      if (!repointed) {
        await ctx.runtimeOf(target).removeVolume(dataVolumeNameFor(sandboxId)).catch(() => undefined);
        return { moved: false, why: 'it changed while it was being copied' };
      }
    } finally {
      await source.removeSnapshot(artifacts).catch((err: unknown) => ctx.log.warn({ err, sandboxId }, 'could not remove the move snapshot on the source; its sweep will'));
    }
    await removeFromSource(ctx, source, row);
    ctx.kick(sandboxId);
    return { moved: true, to: target };
  });
}

/**
 * Step 0: pauses an idle running sandbox for its snapshot, and records it PAUSED (desired RUNNING
 * still) with its event, which also drops every replica's cached proxy target. The activity is
 * checked again once the container is frozen: a request that came in since the sandbox was chosen
 * wins, and the sandbox runs on (answers false).
 */
async function pauseToMove(ctx: MoveContext, source: SandboxRuntime, row: SandboxRow, target: string, idleSince: Date): Promise<boolean> {
  const containerId = row.containerId as string;
  await source.pause(containerId);
  const detail = `paused to be moved from engine ${row.engine} to ${target} by a drain`;
  const paused = await ctx.db.transaction(async (tx) => {
    const updated = await tx
      .update(sandboxes)
      .set({ status: 'PAUSED', statusDetail: detail, updatedAt: new Date() })
      .where(and(eq(sandboxes.id, row.id), eq(sandboxes.containerId, containerId), eq(sandboxes.desiredState, 'RUNNING'), lte(sandboxes.lastActiveAt, idleSince)))
      .returning({ id: sandboxes.id });
    if (updated.length === 0) return false;
    await recordEvent(tx, { type: 'sandbox.paused', subjectKind: 'sandbox', subjectId: row.id, sandboxId: row.id, previousStatus: 'RUNNING', status: 'PAUSED', statusDetail: detail });
    return true;
  });
  // Else its reconciler unpauses it, should this fail.
  if (!paused) await source.unpause(containerId).catch((err: unknown) => ctx.log.warn({ err, sandboxId: row.id }, 'could not unpause a sandbox a drain left running; its reconciler will'));
  return paused;
}

/** Step 3: answers false when the sandbox is no longer this engine's, with this container, or is being deleted (nothing written then). */
async function repoint(ctx: MoveContext, row: SandboxRow, target: string, snapshot: { id: string; image: string; volume: string; sizeBytes: number }): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const [spec] = await tx.select({ labels: sandboxSpecs.engineLabels }).from(sandboxSpecs).where(eq(sandboxSpecs.id, row.specId));
    await placeSandbox(tx, spec?.labels ?? {}, target);
    const detail = `moved from engine ${row.engine} to ${target} by a drain`;
    const updated = await tx
      .update(sandboxes)
      .set({ engine: target, containerId: null, hostPorts: null, hostAddress: null, snapshotId: snapshot.id, image: snapshot.image, statusDetail: detail, updatedAt: new Date() })
      .where(
        and(
          eq(sandboxes.id, row.id),
          eq(sandboxes.engine, row.engine),
          eq(sandboxes.containerId, row.containerId as string),
          ne(sandboxes.desiredState, 'DELETED'),
          isNull(sandboxes.deletedAt),
          isNull(sandboxes.poolFingerprint),
        ),
      )
      .returning({ id: sandboxes.id });
    if (updated.length === 0) return false;
    await tx
      .update(engines)
      .set({ movedSandboxes: sql`${engines.movedSandboxes} + 1` })
      .where(eq(engines.name, row.engine));
    await tx.insert(snapshots).values({ id: snapshot.id, name: `moved from ${row.engine}`, sandboxId: row.id, specId: row.specId, engine: target, image: snapshot.image, volume: snapshot.volume, sizeBytes: snapshot.sizeBytes });
    await recordEvent(tx, { type: 'sandbox.moved', subjectKind: 'sandbox', subjectId: row.id, sandboxId: row.id, previousStatus: 'PAUSED', status: 'PAUSED', statusDetail: detail });
    return true;
  });
}

/** Step 4: the sandbox is the target's now; what it left on the source goes (or is swept there later). */
async function removeFromSource(ctx: MoveContext, source: SandboxRuntime, row: SandboxRow): Promise<void> {
  try {
    await source.remove(row.containerId as string);
    await source.removeVolume(dataVolumeNameFor(row.id));
    await source.removeNetworks(row.id);
  } catch (err) {
    ctx.log.warn({ err, sandboxId: row.id, engine: row.engine }, 'could not remove a moved sandbox from its old engine; its sweep will');
  }
}
