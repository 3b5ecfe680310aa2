import type { SandboxSpecRow } from '../../db/schema.js';
import type { SandboxSpecInfo } from '../../models/sandbox-spec.js';

/** The wire view of a spec row: OpenHands' SandboxSpecInfo fields, then ours. */
export function toSandboxSpecInfo(row: SandboxSpecRow): SandboxSpecInfo {
  return {
    id: row.id,
    command: row.command,
    initial_env: row.initialEnv,
    working_dir: row.workingDir,
    created_at: row.createdAt.toISOString(),
    image: row.image,
    exposed_ports: row.exposedPorts,
    cpus: row.cpus,
    memory_mb: row.memoryMb,
    pids_limit: row.pidsLimit,
    runtime: row.runtime,
    network: row.network,
    idle_pause_seconds: row.idlePauseSeconds,
    ttl_seconds: row.ttlSeconds,
    resume_on_access: row.resumeOnAccess,
    is_default: row.isDefault,
  };
}
