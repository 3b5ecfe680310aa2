import type { MessageRole, SendMessageRequest } from '../../../contracts/agent-server/conversation-requests.js';
import { MessageEventSchema, type EventSource, type MessageEvent } from '../../../events/index.js';
import { withActivatedSkills } from '../../instructions/user-message.js';
import type { ConversationContext } from '../context.js';
import { runConversation } from '../conversations/run-conversation.js';

/** Appends the message as a MessageEvent and, when asked, runs the agent. */
export async function sendMessage(ctx: ConversationContext, input: { conversationId: string; request: SendMessageRequest }): Promise<void> {
  const conversation = ctx.conversations.require(input.conversationId);
  const { event, change } = await withActivatedSkills(conversation, ctx.conversations.agentUser, messageEventFrom(input.request));
  await ctx.conversations.appendEvents(conversation, [event], change);
  if (input.request.run) await runConversation(ctx, input.conversationId);
}

/**
 * The source recorded for a message sent through the API, by its role: user messages come from the
 * user, assistant messages stand for the agent, and system or tool messages for the environment.
 */
const SOURCE_OF_ROLE: Record<MessageRole, EventSource> = {
  user: 'user',
  assistant: 'agent',
  system: 'environment',
  tool: 'environment',
};

/** A new MessageEvent (fresh id and timestamp) carrying the request's message. */
function messageEventFrom(request: SendMessageRequest): MessageEvent {
  return MessageEventSchema.parse({
    kind: 'MessageEvent',
    source: SOURCE_OF_ROLE[request.role],
    llm_message: { role: request.role, content: request.content },
  });
}
