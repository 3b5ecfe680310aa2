import { and, eq, isNull } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { adoptedInstallations, sandboxes, snapshots } from '../db/schema.js';
import { dataVolumeNameFor } from '../runtime/resource-names.js';
import { installationOf, Ownership, type ResourceKind } from '../reconciler/foreign-resources.js';
import type { SandboxRuntime } from '../runtime/runtime.js';

/** A resource on an engine that this installation neither made nor adopted, and that no row of its database claims. */
export interface ForeignEntry {
  engine: string;
  kind: ResourceKind;
  /** Its name (or id, for a container) on the engine. */
  name: string;
  installation: string;
  /** The sandbox or snapshot it belongs to, by its own installation's ids; '' for none. */
  owner: string;
  /** Removes it (a container with its data volume); a missing one is success. */
  remove(): Promise<void>;
}

/**
 * Lists, on each engine, the resources carrying our instance label that belong to another
 * installation (another database, or a release before the installation label) and are not adopted:
 * what the sweeps leave alone and report. Containers come first, so that removing the list in order
 * frees networks and volumes before they are removed.
 */
export async function listForeignResources(
  db: Database,
  installationId: string,
  runtimes: readonly { engine: string; runtime: SandboxRuntime }[],
): Promise<ForeignEntry[]> {
  const ownership = new Ownership(installationId);
  ownership.adopt(new Set((await db.select().from(adoptedInstallations)).map((row) => row.installation)));
  const entries: ForeignEntry[] = [];
  for (const { engine, runtime } of runtimes) {
    const liveSandboxes = new Set(
      (await db.select({ id: sandboxes.id }).from(sandboxes).where(and(eq(sandboxes.engine, engine), isNull(sandboxes.deletedAt)))).map((row) => row.id),
    );
    const claimedSnapshots = new Set((await db.select({ id: snapshots.id }).from(snapshots).where(eq(snapshots.engine, engine))).map((row) => row.id));
    const foreign = <T extends { installation?: string }>(resources: readonly T[], claimed: (resource: T) => boolean) =>
      resources.filter((resource) => !ownership.owns(resource) && !claimed(resource));
    const add = (kind: ResourceKind, name: string, resource: { installation?: string }, owner: string, remove: () => Promise<void>) =>
      entries.push({ engine, kind, name, installation: installationOf(resource), owner, remove });

    // Containers first: listing them notes which spare networks they use.
    for (const c of foreign(await runtime.list(), (c) => liveSandboxes.has(c.sandboxId))) {
      add('container', c.containerId, c, c.sandboxId, async () => {
        await runtime.remove(c.containerId);
        if (c.sandboxId) await runtime.removeVolume(dataVolumeNameFor(c.sandboxId));
      });
    }
    for (const copy of foreign(await runtime.listVolumeCopies(), () => false)) {
      add('volume-copy', copy.containerId, copy, '', () => runtime.remove(copy.containerId));
    }
    for (const n of foreign(await runtime.listNetworks(), (n) => liveSandboxes.has(n.sandboxId))) {
      add('network', n.name, n, n.sandboxId, () => runtime.removeNetwork(n.name));
    }
    for (const v of foreign(await runtime.listUnusedVolumes(), (v) => liveSandboxes.has(v.sandboxId))) {
      add('volume', v.name, v, v.sandboxId, () => runtime.removeVolume(v.name));
    }
    for (const s of foreign(await runtime.listSnapshots(), (s) => claimedSnapshots.has(s.snapshotId))) {
      add('snapshot', s.image ?? s.volume ?? s.snapshotId, s, s.snapshotId, () => runtime.removeSnapshot(s));
    }
  }
  return entries;
}
