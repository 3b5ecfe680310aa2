import type { ConversationInfo } from '../../../contracts/agent-server/conversation-info.js';
import { toConversationInfo } from './conversation-info.js';
import type { ConversationContext } from '../context.js';

/** One entry per id, in order, null for an unknown one. */
export function batchGetConversations(ctx: ConversationContext, ids: readonly string[]): (ConversationInfo | null)[] {
  return ids.map((id) => {
    const conversation = ctx.conversations.find(id);
    return conversation ? toConversationInfo(conversation.metadata) : null;
  });
}
