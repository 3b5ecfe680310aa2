import { and, eq, gt, isNotNull, isNull, ne, or, sql } from 'drizzle-orm';
import { SANDBOX_STATUSES } from '../../contracts/sandbox.js';
import type { SandboxMetrics, WarmPoolCounts } from '../../http/metrics/index.js';
import type { Database } from '../db/client.js';
import { sandboxes, sandboxSpecs } from '../db/schema.js';

/** Gives the sandbox gauges their reads of the database, made at each scrape so every replica serves the same values. */
export function readSandboxGaugesFrom(db: Database, metrics: SandboxMetrics): void {
  metrics.setStatusCounts(() => countSandboxesByStatus(db));
  metrics.setVersionCounts(() => countSandboxesByAgentServerVersion(db));
  metrics.setWarmPoolCounts(() => countWarmPools(db));
}

/** Live sandboxes by observed status, zeros included so no series vanishes; warm-pool members have their own gauges. */
async function countSandboxesByStatus(db: Database): Promise<Record<string, number>> {
  const rows = await db
    .select({ status: sandboxes.status, count: sql<number>`count(*)::int` })
    .from(sandboxes)
    .where(sql`${sandboxes.desiredState} <> 'DELETED' and ${sandboxes.poolFingerprint} is null`)
    .groupBy(sandboxes.status);
  const counts: Record<string, number> = Object.fromEntries(SANDBOX_STATUSES.map((status) => [status, 0]));
  for (const row of rows) counts[row.status] = row.count;
  return counts;
}

/** Live sandboxes by the agent-server version their container runs (those with a known version). */
async function countSandboxesByAgentServerVersion(db: Database): Promise<Record<string, number>> {
  const rows = await db
    .select({ version: sandboxes.agentServerVersion, count: sql<number>`count(*)::int` })
    .from(sandboxes)
    .where(and(ne(sandboxes.desiredState, 'DELETED'), isNotNull(sandboxes.agentServerVersion)))
    .groupBy(sandboxes.agentServerVersion);
  return Object.fromEntries(rows.map((row) => [row.version as string, row.count]));
}

/**
 * Per spec that has a warm pool (or sandboxes claimed from one): ready current members, and live sandboxes
 * claimed from it. Specs with a pool are listed even at zero so their series do not vanish.
 */
async function countWarmPools(db: Database): Promise<WarmPoolCounts> {
  const counts: Record<string, { ready: number; claimed: number }> = {};
  const pooled = await db
    .select({ id: sandboxSpecs.id })
    .from(sandboxSpecs)
    .where(and(isNull(sandboxSpecs.deletedAt), gt(sandboxSpecs.warmPoolSize, 0)));
  for (const { id } of pooled) counts[id] = { ready: 0, claimed: 0 };
  const rows = await db
    .select({
      specId: sandboxes.specId,
      ready: sql<number>`(count(*) filter (where ${sandboxes.poolFingerprint} = ${sandboxSpecs.warmPoolFingerprint} and ${sandboxes.status} = 'RUNNING'))::int`,
      claimed: sql<number>`(count(*) filter (where ${sandboxes.claimedAt} is not null))::int`,
    })
    .from(sandboxes)
    .innerJoin(sandboxSpecs, eq(sandboxes.specId, sandboxSpecs.id))
    .where(
      and(
        ne(sandboxes.desiredState, 'DELETED'),
        or(isNotNull(sandboxes.poolFingerprint), isNotNull(sandboxes.claimedAt)),
      ),
    )
    .groupBy(sandboxes.specId);
  for (const row of rows) counts[row.specId] = { ready: row.ready, claimed: row.claimed };
  return counts;
}
