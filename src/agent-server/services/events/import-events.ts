import { readEventBatch } from './event-batch.js';
import type { ConversationContext } from '../context.js';

/**
 * Reads an import body (a JSON array or NDJSON, see event-batch.ts) and appends its events, ids and
 * timestamps kept, all or none. An unknown conversation is refused before the body is read.
 */
export async function importEvents(
  ctx: ConversationContext,
  input: { conversationId: string; body: AsyncIterable<string> | Iterable<string> },
): Promise<number> {
  const conversation = ctx.conversations.require(input.conversationId);
  const events = await readEventBatch(input.body);
  await ctx.conversations.appendEvents(conversation, events);
  return events.length;
}
