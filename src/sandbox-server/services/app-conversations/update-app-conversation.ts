import { eq } from 'drizzle-orm';
import { NotFoundError } from '../../../errors/index.js';
import { type AppConversationRow, appConversations } from '../../db/schema.js';
import type { AppConversation } from '../../models/app-conversation.js';
import type { AppConversationContext } from './context.js';
import { getAppConversation } from './get-app-conversations.js';

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
