import { UnavailableError } from '../../../errors/index.js';
import type { SnapshotEngine } from '../context.js';

const refuse = (): Promise<never> => Promise.reject(new UnavailableError('Snapshots need a container engine, and this server has none'));

/** The snapshot engine of an app built without a container runtime (tests of the API alone). */
export const NO_SNAPSHOT_ENGINE: SnapshotEngine = {
  runtimeOf: () => ({ snapshot: refuse, restoreVolume: refuse, removeSnapshot: refuse, removeVolume: refuse }),
  hold: (_sandboxId, work) => work(),
};
