import { and, inArray, isNull, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { type EngineRow, sandboxes } from '../../db/schema.js';
import type { EngineInfo } from '../../models/engine.js';
import type { Transaction } from '../context.js';

export function toEngineInfo(row: EngineRow, sandboxCount: number): EngineInfo {
  return {
    name: row.name,
    docker_url: row.dockerUrl,
    advertise_host: row.advertiseHost,
    max_sandboxes: row.maxSandboxes,
    labels: row.labels,
    state: row.state,
    health: row.health,
    health_detail: row.healthDetail,
    last_seen_at: row.lastSeenAt?.toISOString() ?? null,
    sandboxes: sandboxCount,
    created_at: row.createdAt.toISOString(),
  };
}

/** The wire views of engine rows, each with its live sandboxes (warm-pool members included) counted. */
export async function toEngineInfos(db: Database | Transaction, rows: readonly EngineRow[]): Promise<EngineInfo[]> {
  if (rows.length === 0) return [];
  const counts = await db
    .select({ engine: sandboxes.engine, live: sql<number>`count(*)::int` })
    .from(sandboxes)
    .where(
      and(
        inArray(
          sandboxes.engine,
          rows.map((row) => row.name),
        ),
        isNull(sandboxes.deletedAt),
      ),
    )
    .groupBy(sandboxes.engine);
  const live = new Map(counts.map((count) => [count.engine, Number(count.live)]));
  return rows.map((row) => toEngineInfo(row, live.get(row.name) ?? 0));
}
