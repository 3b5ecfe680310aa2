import type { Event } from '../../../events/index.js';
import type { EventLog } from '../../store/index.js';
import type { ConversationContext } from '../context.js';

/** The event log of a conversation, or undefined when there is no such conversation. */
export async function findEventLog(ctx: ConversationContext, id: string): Promise<EventLog<Event> | undefined> {
  const conversation = ctx.conversations.find(id);
  return conversation ? ctx.conversations.openLog(conversation) : undefined;
}
