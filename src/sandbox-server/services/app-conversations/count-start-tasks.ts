import { and, sql } from 'drizzle-orm';
import type { StartTaskStatus } from '../../../contracts/start-task.js';
import { appConversationStartTasks } from '../../db/schema.js';
import type { AppConversationContext } from './context.js';
import { statusCondition } from './start-task-filter.js';

export async function countStartTasks(ctx: AppConversationContext, input: { status?: StartTaskStatus }): Promise<number> {
  const [row] = await ctx.db
    .select({ count: sql<number>`count(*)::int` })
    .from(appConversationStartTasks)
    .where(and(...statusCondition(input.status)));
  return row?.count ?? 0;
}
