import { and, eq, type SQL } from 'drizzle-orm';
import { validationError } from '../../../errors/index.js';
import type { Page } from '../../../contracts/paging.js';
import { keysetPage } from '../../db/keyset-page.js';
import { snapshots } from '../../db/schema.js';
import type { SnapshotInfo } from '../../models/snapshot.js';
import type { ServiceContext } from '../context.js';
import { toSnapshotInfo } from './snapshot-view.js';

export interface SearchSnapshotsInput {
  pageId?: string;
  limit: number;
  sandboxId?: string;
  specId?: string;
}

/** Snapshots, newest first, paged by keyset like sandboxes (`next_page_id` is the next page's first id). */
export async function searchSnapshots(ctx: ServiceContext, input: SearchSnapshotsInput): Promise<Page<SnapshotInfo>> {
  const conditions: SQL[] = [];
  if (input.sandboxId !== undefined) conditions.push(eq(snapshots.sandboxId, input.sandboxId));
  if (input.specId !== undefined) conditions.push(eq(snapshots.specId, input.specId));
  if (input.pageId !== undefined) {
    const [cursorRow] = await ctx.db.select({ id: snapshots.id }).from(snapshots).where(eq(snapshots.id, input.pageId));
    if (!cursorRow) throw validationError('query', ['page_id'], 'Unknown page_id');
  }
  const { cursor, orderBy } = keysetPage({
    table: snapshots,
    idColumn: snapshots.id,
    sortKey: snapshots.createdAt,
    descending: true,
    pageId: input.pageId,
  });
  if (cursor) conditions.push(cursor);
  const rows = await ctx.db
    .select()
    .from(snapshots)
    .where(and(...conditions))
    .orderBy(...orderBy)
    .limit(input.limit + 1);
  const next = rows.length > input.limit ? rows[input.limit] : undefined;
  return { items: rows.slice(0, input.limit).map(toSnapshotInfo), next_page_id: next?.id ?? null };
}
