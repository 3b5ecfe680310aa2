import type { ConfirmationPolicy } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../context.js';

export async function setConfirmationPolicy(ctx: ConversationContext, input: { conversationId: string; policy: ConfirmationPolicy }): Promise<void> {
  const runner = await ctx.conversations.runnerOf(ctx.conversations.require(input.conversationId));
  await runner.setConfirmationPolicy(input.policy);
}
