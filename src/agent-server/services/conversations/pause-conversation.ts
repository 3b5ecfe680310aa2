import type { ConversationContext } from '../context.js';

/** Stops the loop at its next safe point and records a PauseEvent. */
export async function pauseConversation(ctx: ConversationContext, id: string): Promise<void> {
  const runner = await ctx.conversations.runnerOf(ctx.conversations.require(id));
  await runner.pause();
}
