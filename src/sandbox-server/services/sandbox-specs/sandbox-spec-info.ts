import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { type SandboxSpecRow, sandboxes, sandboxSpecs } from '../../db/schema.js';
import { MASKED_ENV_VALUE, type SandboxSpecInfo } from '../../models/sandbox-spec.js';

/** The wire view of a spec row: OpenHands' SandboxSpecInfo fields, then ours. */
export function toSandboxSpecInfo(row: SandboxSpecRow, warmPoolReady = 0): SandboxSpecInfo {
  return {
    id: row.id,
    command: row.command,
    initial_env: Object.fromEntries(Object.entries(row.initialEnv).map(([name, value]) => [name, row.secretEnv.includes(name) ? MASKED_ENV_VALUE : value])),
    secret_env: row.secretEnv,
    secret_hosts: row.secretHosts,
    working_dir: row.workingDir,
    created_at: row.createdAt.toISOString(),
    image: row.image,
    exposed_ports: row.exposedPorts,
    cpus: row.cpus,
    memory_mb: row.memoryMb,
    pids_limit: row.pidsLimit,
    disk_mb: row.diskMb,
    runtime: row.runtime,
    network: row.network,
    egress: row.egress,
    idle_pause_seconds: row.idlePauseSeconds,
    ttl_seconds: row.ttlSeconds,
    resume_on_access: row.resumeOnAccess,
    warm_pool_size: row.warmPoolSize,
    warm_pool_ready: warmPoolReady,
    engine_labels: row.engineLabels,
    movable: row.movable,
    is_default: row.isDefault,
    build: row.buildStatus === null ? null : {
      status: row.buildStatus,
      detail: row.buildDetail,
      cached: row.buildCached,
      started_at: (row.buildStartedAt ?? row.createdAt).toISOString(),
      finished_at: row.buildFinishedAt?.toISOString() ?? null,
    },
  };
}

/** The wire views of spec rows, each with how many of its warm-pool members are ready to claim (current ones only). */
export async function toSandboxSpecInfos(db: Database, rows: readonly SandboxSpecRow[]): Promise<SandboxSpecInfo[]> {
  const pooled = rows.filter((row) => row.warmPoolSize > 0).map((row) => row.id);
  const ready = new Map<string, number>();
  if (pooled.length > 0) {
    const counts = await db
      .select({ specId: sandboxes.specId, count: sql<number>`count(*)::int` })
      .from(sandboxes)
      .innerJoin(sandboxSpecs, eq(sandboxes.specId, sandboxSpecs.id))
      .where(
        and(
          inArray(sandboxes.specId, pooled),
          eq(sandboxes.poolFingerprint, sandboxSpecs.warmPoolFingerprint),
          eq(sandboxes.status, 'RUNNING'),
          eq(sandboxes.desiredState, 'RUNNING'),
        ),
      )
      .groupBy(sandboxes.specId);
    for (const { specId, count } of counts) ready.set(specId, count);
  }
  return rows.map((row) => toSandboxSpecInfo(row, ready.get(row.id) ?? 0));
}
