import { and, eq, ne } from 'drizzle-orm';
import { validationError } from '../../../errors/index.js';
import type { Page } from '../../../contracts/paging.js';
import { keysetPage } from '../../db/keyset-page.js';
import type { SandboxStatus } from '../../../contracts/sandbox.js';
import { sandboxes } from '../../db/schema.js';
import type { SandboxInfo } from '../../models/sandbox.js';
import type { ServiceContext } from '../context.js';
import { notInWarmPool } from './find-sandbox.js';
import { engineAwayDetails } from './engine-away.js';
import { toSandboxInfo } from './sandbox-info.js';

export interface SearchSandboxesInput {
  pageId?: string;
  limit: number;
  status?: SandboxStatus;
}

/**
 * Sandboxes not deleted, newest first (created_at, then id, both descending). `next_page_id` is
 * the id of the first sandbox of the next page; the next query starts at that row's
 * (created_at, id), compared inside the database so the microseconds JavaScript dates drop do not
 * matter. Rows are never removed, so a page id stays valid even after its sandbox is deleted.
 */
export async function searchSandboxes(ctx: ServiceContext, input: SearchSandboxesInput): Promise<Page<SandboxInfo>> {
  const conditions = [ne(sandboxes.desiredState, 'DELETED'), notInWarmPool];
  if (input.status) conditions.push(eq(sandboxes.status, input.status));
  if (input.pageId !== undefined) {
    const [cursorRow] = await ctx.db.select({ id: sandboxes.id }).from(sandboxes).where(eq(sandboxes.id, input.pageId));
    if (!cursorRow) throw validationError('query', ['page_id'], 'Unknown page_id');
  }
  const { cursor, orderBy } = keysetPage({
    table: sandboxes,
    idColumn: sandboxes.id,
    sortKey: sandboxes.createdAt,
    descending: true,
    pageId: input.pageId,
  });
  if (cursor) conditions.push(cursor);
  const rows = await ctx.db
    .select()
    .from(sandboxes)
    .where(and(...conditions))
    .orderBy(...orderBy)
    .limit(input.limit + 1);
  const next = rows.length > input.limit ? rows[input.limit] : undefined;
  const away = await engineAwayDetails(ctx.db);
  return { items: rows.slice(0, input.limit).map((row) => toSandboxInfo(row, away.get(row.engine))), next_page_id: next?.id ?? null };
}
