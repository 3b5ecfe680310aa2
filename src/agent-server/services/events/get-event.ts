import { NotFoundError } from '../../../errors/index.js';
import type { Event } from '../../../events/index.js';
import type { ConversationContext } from '../context.js';

/** OpenHands answers an unknown conversation or event here with its generic "Not Found". */
export async function getEvent(ctx: ConversationContext, input: { conversationId: string; eventId: string }): Promise<Event> {
  const conversation = ctx.conversations.find(input.conversationId);
  const event = conversation ? await (await ctx.conversations.openLog(conversation)).get(input.eventId) : undefined;
  if (!event) throw new NotFoundError();
  return event;
}
