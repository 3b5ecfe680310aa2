import { eq } from 'drizzle-orm';
import { validationError } from '../../../errors/index.js';
import { sandboxes } from '../../db/schema.js';
import type { EgressPolicy, SandboxEgressInfo } from '../../models/egress-policy.js';
import { normalizeEgressLists } from '../../net/egress-policy.js';
import type { ServiceContext } from '../context.js';
import { findLiveSandbox } from '../sandboxes/find-sandbox.js';
import { specOf, toSandboxEgressInfo } from './sandbox-egress-view.js';

/**
 * Gives a running (or paused) `allowlist` sandbox its own egress policy, or (null) its spec's again.
 * This replica's packet rules, proxy and resolver take it before the answer; a replica running the
 * sandbox's engine elsewhere within its next pass. A sandbox of another network is a 422: its
 * network was made for what it reaches, and a policy would not apply to it.
 */
export async function updateSandboxEgress(ctx: ServiceContext, input: { id: string; egress: EgressPolicy | null }): Promise<SandboxEgressInfo> {
  const info = await ctx.db.transaction(async (tx) => {
    const row = await findLiveSandbox(tx, input.id, { forUpdate: true });
    const spec = await specOf(tx, row);
    if (spec.network !== 'allowlist') {
      throw validationError('body', ['egress'], `applies to network "allowlist" only; this sandbox's network is "${spec.network}"`);
    }
    const egress = input.egress === null ? null : normalizeEgressLists(input.egress);
    const [updated] = await tx.update(sandboxes).set({ egress, updatedAt: new Date() }).where(eq(sandboxes.id, row.id)).returning();
    return toSandboxEgressInfo(updated ?? row, spec);
  });
  await ctx.applyEgress?.();
  return info;
}
