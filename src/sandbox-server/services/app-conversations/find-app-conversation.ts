import { eq } from 'drizzle-orm';
import { NotFoundError } from '../../../errors/index.js';
import { type AppConversationRow, appConversations } from '../../db/schema.js';
import type { AppConversationContext } from './context.js';

/** The stored row, for routes that reach the conversation's agent-server. Not found when unknown. */
export async function findAppConversation(ctx: AppConversationContext, id: string): Promise<AppConversationRow> {
  const [row] = await ctx.db.select().from(appConversations).where(eq(appConversations.id, id));
  if (!row) throw new NotFoundError('App conversation not found');
  return row;
}
