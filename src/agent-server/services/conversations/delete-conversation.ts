import type { ConversationContext } from '../context.js';

export async function deleteConversation(ctx: ConversationContext, id: string): Promise<void> {
  await ctx.conversations.remove(ctx.conversations.require(id));
}
