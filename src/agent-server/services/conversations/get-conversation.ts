import type { ConversationInfo } from '../../../contracts/agent-server/conversation-info.js';
import { NotFoundError } from '../../../errors/index.js';
import { toConversationInfo } from './conversation-info.js';
import type { ConversationContext } from '../context.js';

/** OpenHands answers a GET of an unknown conversation with its generic "Not Found". */
export function getConversation(ctx: ConversationContext, id: string): ConversationInfo {
  const conversation = ctx.conversations.find(id);
  if (!conversation) throw new NotFoundError();
  return toConversationInfo(conversation.metadata);
}
