import { logger } from '../../../logger.js';
import type { ConversationContext } from '../context.js';
import { pauseConversation } from './pause-conversation.js';
import { runConversation } from './run-conversation.js';

/**
 * At start, for each agent that was running when the data was last written: in this sandbox's
 * own data (a restart), it carries on where its log ends, in the background. In a copy (a fork, a
 * start from a snapshot), it is paused first, before the server answers: the copy must not repeat
 * what the original's agent is doing (its LLM calls, its commands); running it is the user's call.
 */
export async function resumeConversations(ctx: ConversationContext, options: { copied: boolean }): Promise<void> {
  const running = ctx.conversations.all().filter((metadata) => metadata.execution_status === 'running');
  for (const { id } of running) {
    if (!options.copied) {
      void runConversation(ctx, id);
      continue;
    }
    try {
      await pauseConversation(ctx, id);
    } catch (error) {
      logger.error({ err: error, conversationId: id }, 'could not pause a copied conversation');
    }
  }
}
