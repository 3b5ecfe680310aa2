import { inArray } from 'drizzle-orm';
import { BadRequestError } from '../../../errors/index.js';
import { snapshots } from '../../db/schema.js';
import { MAX_BATCH_IDS } from '../../models/common.js';
import type { SnapshotInfo } from '../../models/snapshot.js';
import type { ServiceContext } from '../context.js';
import { toSnapshotInfo } from './snapshot-view.js';

/** One entry per requested id, in order: the snapshot, or null when unknown or deleted. */
export async function getSnapshots(ctx: ServiceContext, ids: readonly string[]): Promise<(SnapshotInfo | null)[]> {
  if (ids.length > MAX_BATCH_IDS) throw new BadRequestError(`Too many ids: at most ${MAX_BATCH_IDS} per request`);
  const rows = await ctx.db
    .select()
    .from(snapshots)
    .where(inArray(snapshots.id, [...new Set(ids)]));
  const byId = new Map(rows.map((row) => [row.id, toSnapshotInfo(row)]));
  return ids.map((id) => byId.get(id) ?? null);
}
