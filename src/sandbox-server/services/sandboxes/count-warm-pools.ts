import { and, eq, gt, isNotNull, isNull, ne, or, sql } from 'drizzle-orm';
import type { WarmPoolCounts } from '../../../http/metrics/index.js';
import type { Database } from '../../db/client.js';
import { sandboxes, sandboxSpecs } from '../../db/schema.js';

/**
 * Per spec that has a warm pool (or sandboxes claimed from one): ready current members, and live sandboxes
 * claimed from it. Specs with a pool are listed even at zero so their series do not vanish.
 */
export async function countWarmPools(db: Database): Promise<WarmPoolCounts> {
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
