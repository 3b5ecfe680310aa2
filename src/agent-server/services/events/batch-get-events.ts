import { BadRequestError } from '../../../errors/index.js';
import type { Event } from '../../../events/index.js';
import type { ConversationContext } from '../context.js';

/** As in OpenHands: a batch get of more events than this is a bad request. */
export const MAX_BATCH_EVENT_IDS = 100;

/** One entry per id, in order, null for an unknown event. */
export async function batchGetEvents(ctx: ConversationContext, input: { conversationId: string; eventIds: readonly string[] }): Promise<(Event | null)[]> {
  const { eventIds } = input;
  if (eventIds.length > MAX_BATCH_EVENT_IDS) {
    throw new BadRequestError(`Cannot request more than ${MAX_BATCH_EVENT_IDS} events at once, got ${eventIds.length}`);
  }
  const log = await ctx.conversations.requireLog(input.conversationId);
  return Promise.all(eventIds.map(async (eventId) => (await log.get(eventId)) ?? null));
}
