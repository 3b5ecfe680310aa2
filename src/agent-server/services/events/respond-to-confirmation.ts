import type { ConfirmationResponse } from '../../agent/index.js';
import type { ConversationContext } from '../context.js';

export async function respondToConfirmation(ctx: ConversationContext, input: { conversationId: string; response: ConfirmationResponse }): Promise<void> {
  const runner = await ctx.conversations.runnerOf(ctx.conversations.require(input.conversationId));
  void runner.respondToConfirmation(input.response);
}
