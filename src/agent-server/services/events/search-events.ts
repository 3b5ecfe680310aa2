import type { Page } from '../../../contracts/paging.js';
import type { Event } from '../../../events/index.js';
import type { EventQuery } from '../../store/index.js';
import type { ConversationContext } from '../context.js';

export async function searchEvents(ctx: ConversationContext, input: { conversationId: string; query: EventQuery }): Promise<Page<Event>> {
  const page = await (await ctx.conversations.requireLog(input.conversationId)).search(input.query);
  return { items: page.items, next_page_id: page.nextPageId };
}
