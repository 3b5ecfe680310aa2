import { sql } from 'drizzle-orm';
import { SANDBOX_STATUSES } from '../../../contracts/sandbox.js';
import type { Database } from '../../db/client.js';
import { sandboxes } from '../../db/schema.js';

/** Live sandboxes by observed status, zeros included so no series vanishes; warm-pool members have their own gauges. */
export async function countSandboxesByStatus(db: Database): Promise<Record<string, number>> {
  const rows = await db
    .select({ status: sandboxes.status, count: sql<number>`count(*)::int` })
    .from(sandboxes)
    .where(sql`${sandboxes.desiredState} <> 'DELETED' and ${sandboxes.poolFingerprint} is null`)
    .groupBy(sandboxes.status);
  const counts: Record<string, number> = Object.fromEntries(SANDBOX_STATUSES.map((status) => [status, 0]));
  for (const row of rows) counts[row.status] = row.count;
  return counts;
}
