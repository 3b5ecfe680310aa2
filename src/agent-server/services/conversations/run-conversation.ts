import { logger } from '../../../logger.js';
import type { ConversationContext } from '../context.js';

/**
 * Starts the agent loop in the background and answers once it has recorded `running` (or had
 * nothing to do), so a client that polls the status right after never reads the one from before
 * the run. Running it while it runs changes nothing.
 */
export async function runConversation(ctx: ConversationContext, id: string): Promise<void> {
  const conversation = ctx.conversations.require(id);
  const runner = await ctx.conversations.runnerOf(conversation);
  let markRunning!: () => void;
  const running = new Promise<void>((resolve) => (markRunning = resolve));
  conversation.runningWaiters.add(markRunning);
  const finished = runner.run().catch((error: unknown) => {
    logger.error({ err: error, conversationId: conversation.metadata.id }, 'the agent loop failed');
  });
  if (conversation.metadata.execution_status === 'running') markRunning();
  await Promise.race([running, finished]);
  conversation.runningWaiters.delete(markRunning);
}
