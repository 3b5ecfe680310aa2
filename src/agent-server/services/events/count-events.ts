import type { EventFilter } from '../../store/index.js';
import type { ConversationContext } from '../context.js';

export async function countEvents(ctx: ConversationContext, input: { conversationId: string; filter: EventFilter }): Promise<number> {
  return (await ctx.conversations.requireLog(input.conversationId)).count(input.filter);
}
