import type { SandboxInfo } from '../../models/sandbox.js';
import type { ServiceContext } from '../context.js';
import { takeSnapshot } from '../snapshots/take-snapshot.js';
import { startSandbox } from './start-sandbox.js';

/**
 * Snapshot, then start a new sandbox from it: the fork has the same files, conversations and event
 * ids, and its own id and session key. The snapshot stays (listed like any other): the fork runs
 * its image, and can be deleted once the fork is.
 */
export async function forkSandbox(ctx: ServiceContext, input: { sandboxId: string; name?: string | null }): Promise<SandboxInfo> {
  const snapshot = await takeSnapshot(ctx, input);
  return startSandbox(ctx, { snapshotId: snapshot.id });
}
