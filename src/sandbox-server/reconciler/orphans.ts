import type { Logger } from '../../logger.js';
import type {
  ContainerObservation,
  NetworkObservation,
  Owned,
  SandboxRuntime,
  SnapshotObservation,
  VolumeCopyObservation,
  VolumeObservation,
} from '../runtime/runtime.js';
import { dataVolumeNameFor } from '../runtime/resource-names.js';
import { type ForeignResource, type ForeignResourceReport, installationOf, type Ownership, type ResourceKind } from './foreign-resources.js';
import { forEachLimited } from './limit.js';

const REMOVE_CONCURRENCY = 8;

/**
 * Removes containers and networks of this installation that no live row claims (a container
 * with its data volume), data volumes no container uses and no live row claims, volume copies that
 * have ended, and snapshot images and volumes that no snapshot row claims, once they have stayed
 * unclaimed for the grace period. The grace covers a row committed after the listing was
 * taken, and a control plane sharing the label during a rolling restart. Containers go first: a
 * network is removed only once nothing is attached to it. What another installation made (another
 * database or data directory sharing the engine and instance label, or a release before the
 * installation label) is never removed: it is reported instead, unless this installation adopted it.
 */
export class OrphanSweeper {
  /** Orphaned container id or network name -> when a sweep first saw it. */
  private readonly seenAt = new Map<string, number>();
  /** Ended volume copy's container id, or unclaimed data volume's name -> when a sweep first saw it. */
  private readonly volumeSeenAt = new Map<string, number>();
  /** Unclaimed snapshot id -> when a sweep first saw its artifacts. */
  private readonly snapshotSeenAt = new Map<string, number>();

  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly graceMs: number,
    private readonly log: Logger,
    private readonly ownership: Ownership,
    private readonly foreign: ForeignResourceReport,
  ) {}

  /** The unclaimed resources of one kind that are this installation's to remove; the others are added to `foreign`. */
  private ours<T extends Owned>(kind: ResourceKind, unclaimed: readonly T[], nameOf: (resource: T) => string, foreign: ForeignResource[]): T[] {
    return unclaimed.filter((resource) => {
      if (this.ownership.owns(resource)) return true;
      foreign.push({ kind, name: nameOf(resource), installation: installationOf(resource) });
      return false;
    });
  }

  async sweep(
    containers: readonly ContainerObservation[],
    networks: readonly NetworkObservation[],
    liveIds: ReadonlySet<string>,
    now: number,
  ): Promise<void> {
    const foreign: ForeignResource[] = [];
    const orphans = this.ours('container', containers.filter((c) => !liveIds.has(c.sandboxId)), (c) => c.containerId, foreign);
    const orphanNetworks = this.ours('network', networks.filter((n) => !liveIds.has(n.sandboxId)), (n) => n.name, foreign);
    this.foreign.found(['container', 'network'], foreign);
    const keys = new Set([...orphans.map((c) => c.containerId), ...orphanNetworks.map((n) => n.name)]);
    for (const key of this.seenAt.keys()) if (!keys.has(key)) this.seenAt.delete(key);

    /** Sandboxes whose orphaned container is still there, holding its network. */
    const attached = new Set<string>();
    await forEachLimited(orphans, REMOVE_CONCURRENCY, async (orphan) => {
      attached.add(orphan.sandboxId);
      if (!this.graceOver(orphan.containerId, now)) return;
      try {
        await this.runtime.remove(orphan.containerId);
        if (orphan.sandboxId) await this.runtime.removeVolume(dataVolumeNameFor(orphan.sandboxId));
        this.seenAt.delete(orphan.containerId);
        attached.delete(orphan.sandboxId);
        this.log.info({ containerId: orphan.containerId, sandboxId: orphan.sandboxId }, 'removed orphaned container');
      } catch (error) {
        this.log.warn({ containerId: orphan.containerId, err: error }, 'could not remove orphaned container');
      }
    });
    await forEachLimited(orphanNetworks, REMOVE_CONCURRENCY, async (orphan) => {
      if (!this.graceOver(orphan.name, now) || attached.has(orphan.sandboxId)) return;
      try {
        await this.runtime.removeNetwork(orphan.name);
        this.seenAt.delete(orphan.name);
        this.log.info({ network: orphan.name, sandboxId: orphan.sandboxId }, 'removed orphaned network');
      } catch (error) {
        this.log.warn({ network: orphan.name, err: error }, 'could not remove orphaned network');
      }
    });
  }

  /** Records in `seen` when `key` was first seen unclaimed; true once it has been so for the grace period. */
  private graceOver(key: string, now: number, seen = this.seenAt): boolean {
    const seenAt = seen.get(key) ?? now;
    seen.set(key, seenAt);
    return now - seenAt >= this.graceMs;
  }

  /**
   * A copy still running is left to finish (its control plane died mid-copy; `cp` ends by itself),
   * and its target volume is in use until then. A data volume is unclaimed when a restore from a
   * snapshot copied it but its sandbox's row was never written (the control plane died between).
   */
  async sweepVolumes(
    copies: readonly VolumeCopyObservation[],
    volumes: readonly VolumeObservation[],
    liveIds: ReadonlySet<string>,
    now: number,
  ): Promise<void> {
    const foreign: ForeignResource[] = [];
    const ended = this.ours('volume-copy', copies.filter((c) => !c.running), (c) => c.containerId, foreign);
    const unclaimed = this.ours('volume', volumes.filter((v) => !liveIds.has(v.sandboxId)), (v) => v.name, foreign);
    this.foreign.found(['volume-copy', 'volume'], foreign);
    const keys = new Set([...ended.map((c) => c.containerId), ...unclaimed.map((v) => v.name)]);
    for (const key of this.volumeSeenAt.keys()) if (!keys.has(key)) this.volumeSeenAt.delete(key);
    await forEachLimited(ended, REMOVE_CONCURRENCY, async (copy) => {
      if (!this.graceOver(copy.containerId, now, this.volumeSeenAt)) return;
      try {
        await this.runtime.remove(copy.containerId);
        this.volumeSeenAt.delete(copy.containerId);
        this.log.info({ containerId: copy.containerId }, 'removed a volume copy left behind');
      } catch (error) {
        this.log.warn({ containerId: copy.containerId, err: error }, 'could not remove a volume copy left behind');
      }
    });
    await forEachLimited(unclaimed, REMOVE_CONCURRENCY, async (volume) => {
      if (!this.graceOver(volume.name, now, this.volumeSeenAt)) return;
      try {
        await this.runtime.removeVolume(volume.name);
        this.volumeSeenAt.delete(volume.name);
        this.log.info({ volume: volume.name, sandboxId: volume.sandboxId }, 'removed orphaned data volume');
      } catch (error) {
        this.log.warn({ volume: volume.name, err: error }, 'could not remove orphaned data volume');
      }
    });
  }

  async sweepSnapshots(observed: readonly SnapshotObservation[], claimedIds: ReadonlySet<string>, now: number): Promise<void> {
    const foreign: ForeignResource[] = [];
    const orphans = this.ours('snapshot', observed.filter((s) => !claimedIds.has(s.snapshotId)), (s) => s.image ?? s.volume ?? s.snapshotId, foreign);
    this.foreign.found(['snapshot'], foreign);
    const orphanIds = new Set(orphans.map((s) => s.snapshotId));
    for (const snapshotId of this.snapshotSeenAt.keys()) if (!orphanIds.has(snapshotId)) this.snapshotSeenAt.delete(snapshotId);
    await forEachLimited(orphans, REMOVE_CONCURRENCY, async (orphan) => {
      if (!this.graceOver(orphan.snapshotId, now, this.snapshotSeenAt)) return;
      try {
        await this.runtime.removeSnapshot(orphan);
        this.snapshotSeenAt.delete(orphan.snapshotId);
        this.log.info({ snapshotId: orphan.snapshotId }, 'removed orphaned snapshot');
      } catch (error) {
        this.log.warn({ snapshotId: orphan.snapshotId, err: error }, 'could not remove orphaned snapshot');
      }
    });
  }
}
