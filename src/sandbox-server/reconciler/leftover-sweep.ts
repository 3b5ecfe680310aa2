import { eq } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { adoptedInstallations, snapshots } from '../db/schema.js';
import type { SandboxMetrics } from '../../http/metrics/index.js';
import type { Logger } from '../../logger.js';
import type { ContainerObservation, NetworkObservation, SandboxRuntime, VolumeCopyObservation, VolumeObservation } from '../runtime/runtime.js';
import { ForeignResourceReport, Ownership } from './foreign-resources.js';
import { OrphanSweeper } from './orphans.js';

export interface LeftoverSweepOptions {
  db: Database;
  engine: string;
  runtime: SandboxRuntime;
  /** This installation's id (ReconcilerOptions.installationId). */
  installationId: string | undefined;
  /** How long a resource no live row claims is left alone before it is removed. */
  graceMs: number;
  log: Logger;
  metrics: SandboxMetrics | undefined;
}

/** What a full pass lists besides containers, before it reads the rows. */
export interface LeftoverListing {
  networks: NetworkObservation[];
  copies: VolumeCopyObservation[];
  unusedVolumes: VolumeObservation[];
}

/**
 * A full pass's sweep of what no live row claims (orphans.ts): containers, networks, volumes and,
 * when no sandbox is held, snapshot artifacts. Resources are listed before the rows are read, so
 * that every one listed was created from a row committed earlier and a fresh sandbox is never
 * mistaken for an orphan.
 */
export class LeftoverSweep {
  private readonly options: LeftoverSweepOptions;
  private readonly ownership: Ownership;
  private readonly orphans: OrphanSweeper;

  constructor(options: LeftoverSweepOptions) {
    this.options = options;
    this.ownership = new Ownership(options.installationId);
    const foreign = new ForeignResourceReport(options.engine, options.log, options.metrics);
    this.orphans = new OrphanSweeper(options.runtime, options.graceMs, options.log, this.ownership, foreign);
  }

  async list(): Promise<LeftoverListing> {
    const { runtime } = this.options;
    const networks = await runtime.listNetworks();
    const copies = await runtime.listVolumeCopies();
    const unusedVolumes = await runtime.listUnusedVolumes();
    return { networks, copies, unusedVolumes };
  }

  /** Sweeps what `listing` and the pass's `containers` hold that no sandbox of `liveIds` claims. */
  async sweep(listing: LeftoverListing, containers: readonly ContainerObservation[], liveIds: ReadonlySet<string>, anyHeld: boolean): Promise<void> {
    const installations = await this.options.db.select().from(adoptedInstallations);
    this.ownership.adopt(new Set(installations.map((row) => row.installation)));
    await this.orphans.sweep(containers, listing.networks, liveIds, Date.now());
    await this.orphans.sweepVolumes(listing.copies, listing.unusedVolumes, liveIds, Date.now());
    if (!anyHeld) await this.sweepSnapshots();
  }

  /**
   * Snapshot artifacts no row claims: left by a snapshot that failed between the engine and the
   * database, or by a deletion whose removal failed. Not swept while any sandbox is held, since a
   * snapshot under way has artifacts before it has its row; listed before the rows are read, as
   * containers are. Its failures are only logged: they must not hold up the sandboxes' pass.
   */
  private async sweepSnapshots(): Promise<void> {
    const { db, engine, runtime, log } = this.options;
    try {
      const observed = await runtime.listSnapshots();
      const rows = await db.select({ id: snapshots.id }).from(snapshots).where(eq(snapshots.engine, engine));
      await this.orphans.sweepSnapshots(observed, new Set(rows.map((row) => row.id)), Date.now());
    } catch (error) {
      log.warn({ err: error }, 'could not sweep snapshots');
    }
  }
}
