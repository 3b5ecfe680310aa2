import { type AnyColumn, and, eq, gte, ilike, inArray, lt, type SQL, sql } from 'drizzle-orm';
import { BadRequestError, NotFoundError, validationError } from '../../errors/index.js';
import type { Page } from '../../http/paging.js';
import { type AppConversationRow, appConversations, sandboxes } from '../db/schema.js';
import { MAX_BATCH_IDS } from '../models/common.js';
import { agentTargetOf } from '../proxy/resolve-target.js';
import type { AppConversationContext } from './context.js';
import { keysetPage } from '../db/keyset-page.js';
import type { AppConversation, AppConversationFilter, AppConversationSortOrder } from './models.js';
import { toAppConversations } from './view.js';

function filterConditions(filter: AppConversationFilter): SQL[] {
  const conditions: SQL[] = [];
  if (filter.title__contains) conditions.push(ilike(appConversations.title, `%${escapeLike(filter.title__contains)}%`));
  if (filter.created_at__gte) conditions.push(gte(appConversations.createdAt, new Date(filter.created_at__gte)));
  if (filter.created_at__lt) conditions.push(lt(appConversations.createdAt, new Date(filter.created_at__lt)));
  if (filter.updated_at__gte) conditions.push(gte(appConversations.updatedAt, new Date(filter.updated_at__gte)));
  if (filter.updated_at__lt) conditions.push(lt(appConversations.updatedAt, new Date(filter.updated_at__lt)));
  return conditions;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

const SORT_KEYS: Record<AppConversationSortOrder, { key: SQL | AnyColumn; descending: boolean }> = {
  CREATED_AT: { key: appConversations.createdAt, descending: false },
  CREATED_AT_DESC: { key: appConversations.createdAt, descending: true },
  UPDATED_AT: { key: appConversations.updatedAt, descending: false },
  UPDATED_AT_DESC: { key: appConversations.updatedAt, descending: true },
  TITLE: { key: sql`coalesce(${appConversations.title}, '')`, descending: false },
  TITLE_DESC: { key: sql`coalesce(${appConversations.title}, '')`, descending: true },
};

export async function searchAppConversations(
  ctx: AppConversationContext,
  input: AppConversationFilter & { sort_order: AppConversationSortOrder; page_id?: string; limit: number },
): Promise<Page<AppConversation>> {
  const sort = SORT_KEYS[input.sort_order];
  if (input.page_id !== undefined) await requirePageRow(ctx, input.page_id);
  const { cursor, orderBy } = keysetPage({
    table: appConversations,
    idColumn: appConversations.id,
    sortKey: sort.key,
    descending: sort.descending,
    pageId: input.page_id,
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
  if (!row) throw validationError(['query', 'page_id'], 'Unknown page_id');
}

export async function countAppConversations(ctx: AppConversationContext, filter: AppConversationFilter): Promise<number> {
  const [row] = await ctx.db
    .select({ count: sql<number>`count(*)::int` })
    .from(appConversations)
    .where(and(...filterConditions(filter)));
  return row?.count ?? 0;
}

export async function getAppConversations(ctx: AppConversationContext, ids: string[]): Promise<(AppConversation | null)[]> {
  if (ids.length > MAX_BATCH_IDS) throw new BadRequestError(`Too many ids: at most ${MAX_BATCH_IDS}`);
  const rows = ids.length === 0 ? [] : await ctx.db.select().from(appConversations).where(inArray(appConversations.id, ids));
  const views = new Map((await toAppConversations(ctx, rows)).map((view) => [view.id, view]));
  return ids.map((id) => views.get(id) ?? null);
}

export async function getAppConversation(ctx: AppConversationContext, id: string): Promise<AppConversation> {
  const [view] = await getAppConversations(ctx, [id]);
  if (!view) throw new NotFoundError('App conversation not found');
  return view;
}

/** The stored row, for routes that reach the conversation's agent-server. 404 when unknown. */
export async function findAppConversation(ctx: AppConversationContext, id: string): Promise<AppConversationRow> {
  const [row] = await ctx.db.select().from(appConversations).where(eq(appConversations.id, id));
  if (!row) throw new NotFoundError('App conversation not found');
  return row;
}

export async function updateAppConversation(
  ctx: AppConversationContext,
  id: string,
  input: { title?: string | null; tags?: Record<string, string> | null },
): Promise<AppConversation> {
  const values: Partial<AppConversationRow> = { updatedAt: new Date() };
  if (input.title !== undefined) values.title = input.title;
  if (input.tags !== undefined && input.tags !== null) values.tags = input.tags;
  const [row] = await ctx.db.update(appConversations).set(values).where(eq(appConversations.id, id)).returning();
  if (!row) throw new NotFoundError('App conversation not found');
  return getAppConversation(ctx, id);
}

/**
 * Forgets the conversation and, when its sandbox runs, deletes it on the agent-server too. A
 * sandbox that is paused or gone keeps its copy: deleting never waits on, or fails because of, it.
 */
export async function deleteAppConversation(ctx: AppConversationContext, id: string): Promise<void> {
  const row = await findAppConversation(ctx, id);
  const [sandbox] = await ctx.db.select().from(sandboxes).where(eq(sandboxes.id, row.sandboxId));
  const target = sandbox ? agentTargetOf(sandbox) : null;
  if (target) await ctx.agentClient(target).deleteConversation(id).catch(() => undefined);
  await ctx.db.delete(appConversations).where(eq(appConversations.id, id));
}
