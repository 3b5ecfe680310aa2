import { randomUUID } from 'node:crypto';
import type { ConversationInfo } from '../../../contracts/agent-server/conversation-info.js';
import type { StartConversationRequest } from '../../../contracts/agent-server/conversation-requests.js';
import { RequestValidationError } from '../../../errors/index.js';
import { nowTimestamp } from '../../../events/index.js';
import { validateAgentTools } from '../../agent/tools/index.js';
import { toConversationInfo } from './conversation-info.js';
import { newConversationMetadata } from '../../conversations/metadata.js';
import type { ConversationContext } from '../context.js';
import { sendMessage } from '../events/send-message.js';

export interface StartedConversation {
  info: ConversationInfo;
  /** False when a conversation with the requested id already existed; it is returned unchanged. */
  created: boolean;
}

export async function startConversation(ctx: ConversationContext, request: StartConversationRequest): Promise<StartedConversation> {
  // A tool this server cannot run is refused now, not found missing when the agent first runs.
  const problems = validateAgentTools(request.agent);
  if (problems.length > 0) throw new RequestValidationError(problems);
  const id = request.conversation_id ?? randomUUID();
  const existing = ctx.conversations.get(id);
  if (existing) {
    await existing.created;
    return { info: toConversationInfo(existing.metadata), created: false };
  }
  const conversation = ctx.conversations.create(newConversationMetadata(id, request, nowTimestamp()));
  try {
    await conversation.created;
  } catch (error) {
    ctx.conversations.forget(id);
    throw error;
  }
  if (request.initial_message) await sendMessage(ctx, { conversationId: id, request: request.initial_message });
  return { info: toConversationInfo(conversation.metadata), created: true };
}
