import type { SendMessageRequest } from '../../../contracts/agent-server/conversation-requests.js';
import { messageEventFrom } from '../../conversations/message-event.js';
import type { ConversationContext } from '../context.js';
import { runConversation } from '../conversations/run-conversation.js';

/** Appends the message as a MessageEvent and, when asked, runs the agent. */
export async function sendMessage(ctx: ConversationContext, input: { conversationId: string; request: SendMessageRequest }): Promise<void> {
  await ctx.conversations.appendEvents(ctx.conversations.require(input.conversationId), [messageEventFrom(input.request)]);
  if (input.request.run) await runConversation(ctx, input.conversationId);
}
