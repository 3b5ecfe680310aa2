import type { ConversationContext } from '../context.js';

/** Every stored event as NDJSON lines, in append order. */
export async function exportEvents(ctx: ConversationContext, id: string): Promise<AsyncIterable<string>> {
  return (await ctx.conversations.requireLog(id)).exportLines();
}
