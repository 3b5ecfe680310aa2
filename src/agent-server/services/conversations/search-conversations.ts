import type { ConversationInfo } from '../../../contracts/agent-server/conversation-info.js';
import type { Page } from '../../../contracts/paging.js';
import { pageConversations, type ConversationPageQuery } from '../../conversations/conversation-page.js';
import { toConversationInfo } from '../../conversations/info.js';
import type { ConversationContext } from '../context.js';

export function searchConversations(ctx: ConversationContext, query: ConversationPageQuery): Page<ConversationInfo> {
  const page = pageConversations(ctx.conversations.all(), query);
  return { items: page.items.map(toConversationInfo), next_page_id: page.next_page_id };
}
