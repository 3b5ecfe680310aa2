import { agentAnswerOf } from '../../conversations/final-response.js';
import type { ConversationContext } from '../context.js';

/** The agent's newest answer (its finish message or its last text), '' before it answered. */
export async function getAgentFinalResponse(ctx: ConversationContext, id: string): Promise<string> {
  const log = await ctx.conversations.requireLog(id);
  let pageId: string | undefined;
  do {
    const page = await log.search({ sortOrder: 'TIMESTAMP_DESC', limit: 100, pageId });
    for (const event of page.items) {
      const answer = agentAnswerOf(event);
      if (answer !== undefined) return answer;
    }
    pageId = page.nextPageId ?? undefined;
  } while (pageId);
  return '';
}
