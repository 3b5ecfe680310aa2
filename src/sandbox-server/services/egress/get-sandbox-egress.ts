import type { SandboxEgressInfo } from '../../models/egress-policy.js';
import type { ServiceContext } from '../context.js';
import { findLiveSandbox } from '../sandboxes/find-sandbox.js';
import { specOf, toSandboxEgressInfo } from './sandbox-egress-view.js';

/** What the sandbox may reach: its network and the egress policy in force. 404 unknown, 409 deleted. */
export async function getSandboxEgress(ctx: ServiceContext, id: string): Promise<SandboxEgressInfo> {
  const row = await findLiveSandbox(ctx.db, id);
  return toSandboxEgressInfo(row, await specOf(ctx.db, row));
}
