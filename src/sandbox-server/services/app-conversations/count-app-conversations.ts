import { and, sql } from 'drizzle-orm';
import { appConversations } from '../../db/schema.js';
import type { AppConversationFilter } from '../../models/app-conversation.js';
import { filterConditions } from './app-conversation-filter.js';
import type { AppConversationContext } from './context.js';

export async function countAppConversations(ctx: AppConversationContext, filter: AppConversationFilter): Promise<number> {
  const [row] = await ctx.db
    .select({ count: sql<number>`count(*)::int` })
    .from(appConversations)
    .where(and(...filterConditions(filter)));
  return row?.count ?? 0;
}
