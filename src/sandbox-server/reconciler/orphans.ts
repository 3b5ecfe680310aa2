import type { Logger } from '../../logger.js';
import type { ContainerObservation, SandboxRuntime } from '../runtime/runtime.js';
import { dataVolumeNameFor } from './container-request.js';
import { forEachLimited } from './limit.js';

const REMOVE_CONCURRENCY = 8;

/**
 * Removes containers carrying our instance label that no live row claims, with their data volumes,
 * once they have stayed unclaimed for the grace period. The grace covers a row committed after the
 * listing was taken, and a control plane sharing the label during a rolling restart.
 */
export class OrphanSweeper {
  /** Orphaned container id -> when a sweep first saw it. */
  private readonly seenAt = new Map<string, number>();

  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly graceMs: number,
    private readonly log: Logger,
  ) {}

  async sweep(observed: readonly ContainerObservation[], liveIds: ReadonlySet<string>, now: number): Promise<void> {
    const orphans = observed.filter((c) => !liveIds.has(c.sandboxId));
    const orphanIds = new Set(orphans.map((c) => c.containerId));
    for (const containerId of this.seenAt.keys()) if (!orphanIds.has(containerId)) this.seenAt.delete(containerId);
    await forEachLimited(orphans, REMOVE_CONCURRENCY, async (orphan) => {
      const seenAt = this.seenAt.get(orphan.containerId) ?? now;
      this.seenAt.set(orphan.containerId, seenAt);
      if (now - seenAt < this.graceMs) return;
      try {
        await this.runtime.remove(orphan.containerId);
        if (orphan.sandboxId) await this.runtime.removeVolume(dataVolumeNameFor(orphan.sandboxId));
        this.seenAt.delete(orphan.containerId);
        this.log.info({ containerId: orphan.containerId, sandboxId: orphan.sandboxId }, 'removed orphaned container');
      } catch (error) {
        this.log.warn({ containerId: orphan.containerId, err: error }, 'could not remove orphaned container');
      }
    });
  }
}
