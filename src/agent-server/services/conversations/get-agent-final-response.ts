import type { Event } from '../../../events/index.js';
import { textOf } from '../../agent/loop/llm-view.js';
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

/**
 * What the agent last answered, if `event` is such an answer: the message of its finish action,
 * or the text of a message it wrote. OpenHands' agent_final_response reads the newest one.
 */
function agentAnswerOf(event: Event): string | undefined {
  if (event.kind === 'ActionEvent' && event.action?.kind === 'FinishAction') return event.action.message;
  if (event.kind === 'MessageEvent' && event.source === 'agent') return textOf(event.llm_message.content);
  return undefined;
}
