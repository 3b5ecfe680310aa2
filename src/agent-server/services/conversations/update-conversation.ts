import type { UpdateConversationRequest } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../context.js';

export async function updateConversation(ctx: ConversationContext, input: { conversationId: string; request: UpdateConversationRequest }): Promise<void> {
  const { request } = input;
  const conversation = ctx.conversations.require(input.conversationId);
  await ctx.conversations.changeMetadata(conversation, {
    ...(request.title !== undefined && { title: request.title }),
    ...(request.tags != null && { tags: request.tags }),
  });
}
