import { and, eq } from 'drizzle-orm';
import type { StartTaskStatus } from '../../../contracts/start-task.js';
import { validationError } from '../../../errors/index.js';
import type { Page } from '../../../contracts/paging.js';
import { keysetPage } from '../../db/keyset-page.js';
import { appConversationStartTasks } from '../../db/schema.js';
import type { AppConversationStartTask } from '../../models/app-conversation.js';
import { toStartTask } from './app-conversation-view.js';
import type { AppConversationContext } from './context.js';
import { statusCondition } from './start-task-filter.js';

/** Newest first. */
export async function searchStartTasks(
  ctx: AppConversationContext,
  input: { status?: StartTaskStatus; pageId?: string; limit: number },
): Promise<Page<AppConversationStartTask>> {
  if (input.pageId !== undefined) {
    const [row] = await ctx.db
      .select({ id: appConversationStartTasks.id })
      .from(appConversationStartTasks)
      .where(eq(appConversationStartTasks.id, input.pageId));
    if (!row) throw validationError('query', ['page_id'], 'Unknown page_id');
  }
  const { cursor, orderBy } = keysetPage({
    table: appConversationStartTasks,
    idColumn: appConversationStartTasks.id,
    sortKey: appConversationStartTasks.createdAt,
    descending: true,
    pageId: input.pageId,
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
