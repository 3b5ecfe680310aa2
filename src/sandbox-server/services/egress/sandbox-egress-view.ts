import { and, eq, isNull, ne } from 'drizzle-orm';
import type { Database, Transaction } from '../../db/client.js';
import { type SandboxRow, sandboxes, sandboxSpecs, type SandboxSpecRow } from '../../db/schema.js';
import type { SandboxEgressInfo } from '../../models/egress-policy.js';

/** The wire view of a sandbox's egress: its own policy, else its spec's. */
export function toSandboxEgressInfo(row: Pick<SandboxRow, 'id' | 'egress'>, spec: Pick<SandboxSpecRow, 'network' | 'egress'>): SandboxEgressInfo {
  return { sandbox_id: row.id, network: spec.network, egress: row.egress ?? spec.egress, inherited: row.egress === null };
}

/** The spec of a sandbox row (kept even when the spec was deleted). */
export async function specOf(db: Database | Transaction, row: SandboxRow): Promise<SandboxSpecRow> {
  const [spec] = await db.select().from(sandboxSpecs).where(eq(sandboxSpecs.id, row.specId));
  if (!spec) throw new Error(`sandbox ${row.id} has no spec row ${row.specId}`);
  return spec;
}

/** Every live `allowlist` sandbox with the policy in force for it: what the egress gateway enforces. */
export async function listAllowlistPolicies(db: Database): Promise<{ sandboxId: string; egress: SandboxRow['egress'] & object }[]> {
  const rows = await db
    .select({ id: sandboxes.id, own: sandboxes.egress, spec: sandboxSpecs.egress })
    .from(sandboxes)
    .innerJoin(sandboxSpecs, eq(sandboxes.specId, sandboxSpecs.id))
    .where(and(eq(sandboxSpecs.network, 'allowlist'), isNull(sandboxes.deletedAt), ne(sandboxes.desiredState, 'DELETED')));
  return rows.map((row) => ({ sandboxId: row.id, egress: row.own ?? row.spec }));
}
