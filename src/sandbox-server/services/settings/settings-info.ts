import type { InstallationSettingsRow } from '../../db/schema.js';
import type { SettingsInfo } from '../../models/settings.js';

export function toSettingsInfo(row: InstallationSettingsRow): SettingsInfo {
  return {
    warm_pool_size: row.warmPoolSize,
    default_memory_mb: row.memoryMb,
    default_pids_limit: row.pidsLimit,
    default_cpus: row.cpus,
    default_disk_mb: row.diskMb,
    default_runtime: row.runtime,
    updated_at: row.updatedAt.toISOString(),
  };
}
