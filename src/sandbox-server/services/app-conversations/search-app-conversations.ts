import { type AnyColumn, and, eq, type SQL, sql } from 'drizzle-orm';
import { validationError } from '../../../errors/index.js';
import type { Page } from '../../../contracts/paging.js';
import { keysetPage } from '../../db/keyset-page.js';
import { appConversations } from '../../db/schema.js';
import type { AppConversation, AppConversationFilter, AppConversationSortOrder } from '../../models/app-conversation.js';
import { toAppConversations } from './app-conversation-view.js';
import type { AppConversationContext } from './context.js';
import { filterConditions } from './app-conversation-filter.js';

export interface SearchAppConversationsInput extends AppConversationFilter {
  sortOrder: AppConversationSortOrder;
  pageId?: string;
  limit: number;
}

const SORT_KEYS: Record<AppConversationSortOrder, { key: SQL | AnyColumn; descending: boolean }> = {
  CREATED_AT: { key: appConversations.createdAt, descending: false },
  CREATED_AT_DESC: { key: appConversations.createdAt, descending: true },
  UPDATED_AT: { key: appConversations.updatedAt, descending: false },
  UPDATED_AT_DESC: { key: appConversations.updatedAt, descending: true },
  TITLE: { key: sql`coalesce(${appConversations.title}, '')`, descending: false },
  TITLE_DESC: { key: sql`coalesce(${appConversations.title}, '')`, descending: true },
};

export async function searchAppConversations(ctx: AppConversationContext, input: SearchAppConversationsInput): Promise<Page<AppConversation>> {
  const sort = SORT_KEYS[input.sortOrder];
  if (input.pageId !== undefined) await requirePageRow(ctx, input.pageId);
  const { cursor, orderBy } = keysetPage({
    table: appConversations,
    idColumn: appConversations.id,
    sortKey: sort.key,
    descending: sort.descending,
    pageId: input.pageId,
  });
  const conditions = filterConditions(input);
  if (cursor) conditions.push(cursor);
  const rows = await ctx.db
    .select()
    .from(appConversations)
    .where(and(...conditions))
    .orderBy(...orderBy)
    .limit(input.limit + 1);
  const next = rows.length > input.limit ? rows[input.limit] : undefined;
  return { items: await toAppConversations(ctx, rows.slice(0, input.limit)), next_page_id: next?.id ?? null };
}

async function requirePageRow(ctx: AppConversationContext, pageId: string): Promise<void> {
  const [row] = await ctx.db.select({ id: appConversations.id }).from(appConversations).where(eq(appConversations.id, pageId));
  if (!row) throw validationError('query', ['page_id'], 'Unknown page_id');
}
