import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Database, Transaction } from '../../db/client.js';
import { type EngineRow, sandboxes, sandboxSpecs } from '../../db/schema.js';
import type { EngineInfo } from '../../models/engine.js';
import type { RuntimeProbe } from '../../runtime/runtime.js';

/**
 * Live sandboxes on an engine (warm-pool members included); of them, the users' sandboxes a drain
 * must see off (`remaining`: members are not moved but retired and replaced elsewhere), and how
 * many of those it may not move (their spec says so).
 */
export interface EngineCounts {
  live: number;
  remaining: number;
  staying: number;
}

/** The self-test results of an engine's runtimes (ServiceContext.runtimeProbes); null: not (yet) known. */
export type RuntimeProbesOf = (engine: string) => RuntimeProbe[] | null;

export function toEngineInfo(row: EngineRow, counts: EngineCounts, probesOf: RuntimeProbesOf = () => null): EngineInfo {
  const probes = probesOf(row.name);
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
    sandboxes: counts.live,
    drain: row.state === 'DRAINING' ? { moved: row.movedSandboxes, remaining: counts.remaining, staying: counts.staying } : null,
    runtimes:
      probes?.map((probe) => ({
        runtime: probe.runtime,
        status: probe.status,
        detail: probe.detail,
        image: probe.image,
        duration_ms: Math.round(probe.durationMs),
        probed_at: probe.probedAt.toISOString(),
      })) ?? null,
    created_at: row.createdAt.toISOString(),
  };
}

/** The wire views of engine rows, each with its live sandboxes (warm-pool members included) counted. */
export async function toEngineInfos(db: Database | Transaction, rows: readonly EngineRow[], probesOf?: RuntimeProbesOf): Promise<EngineInfo[]> {
  if (rows.length === 0) return [];
  const counts = await db
    .select({
      engine: sandboxes.engine,
      live: sql<number>`count(*)::int`,
      remaining: sql<number>`(count(*) filter (where ${sandboxes.poolFingerprint} is null))::int`,
      staying: sql<number>`(count(*) filter (where ${sandboxes.poolFingerprint} is null and not ${sandboxSpecs.movable}))::int`,
    })
    .from(sandboxes)
    .innerJoin(sandboxSpecs, eq(sandboxSpecs.id, sandboxes.specId))
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
  const byEngine = new Map(counts.map((count) => [count.engine, { live: Number(count.live), remaining: Number(count.remaining), staying: Number(count.staying) }]));
  return rows.map((row) => toEngineInfo(row, byEngine.get(row.name) ?? { live: 0, remaining: 0, staying: 0 }, probesOf));
}
