import { MessageEventSchema, type EventSource, type MessageEvent } from '../../events/index.js';
import type { MessageRole, SendMessageRequest } from '../../contracts/agent-server/conversation-requests.js';

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
export function messageEventFrom(request: SendMessageRequest): MessageEvent {
  return MessageEventSchema.parse({
    kind: 'MessageEvent',
    source: SOURCE_OF_ROLE[request.role],
    llm_message: { role: request.role, content: request.content },
  });
}
