import { randomUUID } from 'node:crypto';
import { and, eq, inArray, type SQL, sql } from 'drizzle-orm';
import { BadRequestError, validationError } from '../../errors/index.js';
import type { Page } from '../../http/paging.js';
import { appConversations, appConversationStartTasks, type StartTaskRow } from '../db/schema.js';
import type { StartTaskStatus } from '../../contracts/start-task.js';
import { MAX_BATCH_IDS } from '../models/common.js';
import { recordEvent } from '../lifecycle-events/record-event.js';
import { startTaskEvent } from '../lifecycle-events/start-task-event.js';
import type { AppConversationContext } from './context.js';
import { keysetPage } from '../db/keyset-page.js';
import type { AppConversationStartRequest, AppConversationStartTask } from './models.js';
import { chooseLlmModel, storedRequest } from './start-request.js';
import { toStartTask } from './view.js';

/**
 * Records a start task (WORKING) and returns it; the StartTaskRunner does the rest in the
 * background. Problems the request itself has (no model, a conversation id in use) are 4xx here,
 * before anything is written.
 */
export async function createStartTask(
  ctx: AppConversationContext,
  request: AppConversationStartRequest,
  createdByUserId: string | null,
): Promise<StartTaskRow> {
  chooseLlmModel(request, ctx.settings);
  const conversationId = request.conversation_id ?? randomUUID();
  if (request.conversation_id) {
    const [existing] = await ctx.db.select({ id: appConversations.id }).from(appConversations).where(eq(appConversations.id, conversationId));
    if (existing) throw validationError(['body', 'conversation_id'], 'An app conversation with this id already exists', 'value_error');
  }
  const now = new Date();
  return ctx.db.transaction(async (tx) => {
    const [task] = await tx
    .insert(appConversationStartTasks)
    .values({
      id: randomUUID(),
      createdByUserId,
      status: 'WORKING',
      conversationId,
      sandboxId: request.sandbox_id ?? null,
      request: storedRequest(request),
      secrets: request.secrets,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
    if (!task) throw new Error('insert returned no row');
    await recordEvent(tx, startTaskEvent(task, null));
    return task;
  });
}

function statusCondition(status: StartTaskStatus | undefined): SQL[] {
  return status ? [eq(appConversationStartTasks.status, status)] : [];
}

/** Newest first. */
export async function searchStartTasks(
  ctx: AppConversationContext,
  input: { status?: StartTaskStatus; page_id?: string; limit: number },
): Promise<Page<AppConversationStartTask>> {
  if (input.page_id !== undefined) {
    const [row] = await ctx.db
      .select({ id: appConversationStartTasks.id })
      .from(appConversationStartTasks)
      .where(eq(appConversationStartTasks.id, input.page_id));
    if (!row) throw validationError(['query', 'page_id'], 'Unknown page_id');
  }
  const { cursor, orderBy } = keysetPage({
    table: appConversationStartTasks,
    idColumn: appConversationStartTasks.id,
    sortKey: appConversationStartTasks.createdAt,
    descending: true,
    pageId: input.page_id,
  });
  const conditions = statusCondition(input.status);
  if (cursor) conditions.push(cursor);
  const rows = await ctx.db
    .select()
    .from(appConversationStartTasks)
    .where(and(...conditions))
    .orderBy(...orderBy)
    .limit(input.limit + 1);
  const next = rows.length > input.limit ? rows[input.limit] : undefined;
  return { items: rows.slice(0, input.limit).map(toStartTask), next_page_id: next?.id ?? null };
}

export async function countStartTasks(ctx: AppConversationContext, input: { status?: StartTaskStatus }): Promise<number> {
  const [row] = await ctx.db
    .select({ count: sql<number>`count(*)::int` })
    .from(appConversationStartTasks)
    .where(and(...statusCondition(input.status)));
  return row?.count ?? 0;
}

export async function getStartTasks(ctx: AppConversationContext, ids: string[]): Promise<(AppConversationStartTask | null)[]> {
  if (ids.length > MAX_BATCH_IDS) throw new BadRequestError(`Too many ids: at most ${MAX_BATCH_IDS}`);
  const rows = ids.length === 0 ? [] : await ctx.db.select().from(appConversationStartTasks).where(inArray(appConversationStartTasks.id, ids));
  const byId = new Map(rows.map((row) => [row.id, toStartTask(row)]));
  return ids.map((id) => byId.get(id) ?? null);
}
