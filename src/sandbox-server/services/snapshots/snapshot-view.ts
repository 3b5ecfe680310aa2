import type { SnapshotRow } from '../../db/schema.js';
import type { SnapshotInfo } from '../../models/snapshot.js';

export function toSnapshotInfo(row: SnapshotRow): SnapshotInfo {
  return {
    id: row.id,
    name: row.name,
    sandbox_id: row.sandboxId,
    sandbox_spec_id: row.specId,
    engine: row.engine,
    size_bytes: row.sizeBytes,
    created_at: row.createdAt.toISOString(),
  };
}
