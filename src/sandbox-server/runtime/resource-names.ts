/**
 * The names of what the server makes on an engine for a sandbox or a snapshot, one place for every
 * reader: the reconciler and services ask for them, the runtime makes them, the sweeps find them.
 * Docker names allow [a-zA-Z0-9_.-]; ids are expected to fit, and the engine says so when not.
 */

export function containerNameFor(sandboxId: string): string {
  return `sandbox-server-${sandboxId}`;
}

export function dataVolumeNameFor(sandboxId: string): string {
  return `sandbox-server-data-${sandboxId}`;
}

export function networkNameFor(sandboxId: string): string {
  return `sandbox-server-net-${sandboxId}`;
}

export function snapshotImageFor(snapshotId: string): string {
  return `sandbox-server/snapshot:${snapshotId}`;
}

export function snapshotVolumeFor(snapshotId: string): string {
  return `sandbox-server-snapshot-${snapshotId}`;
}
