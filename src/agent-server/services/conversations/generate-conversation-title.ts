import type { GenerateTitleRequest } from '../../../contracts/agent-server/conversation-requests.js';
import { ConflictError } from '../../../errors/index.js';
import type { Event } from '../../../events/index.js';
import { createLlmClient, llmConfigFrom } from '../../agent/llm/index.js';
import { llmConfigOf } from '../../conversations/conversation-runner.js';
import { generateTitle, userMessageText } from '../../conversations/generate-title.js';
import type { EventLog } from '../../store/index.js';
import type { ConversationContext } from '../context.js';

/**
 * A title for the conversation from its first user message (OpenHands' generate_title), by the
 * requested LLM or the conversation's own; the title is returned, not stored. A conversation
 * without a user message has nothing to name it by: a conflict.
 */
export async function generateConversationTitle(ctx: ConversationContext, input: { conversationId: string; request: GenerateTitleRequest }): Promise<string> {
  const { request } = input;
  const conversation = ctx.conversations.require(input.conversationId);
  const log = await ctx.conversations.openLog(conversation);
  const message = await firstUserMessage(log);
  if (message === undefined) throw new ConflictError('The conversation has no user message to title it by');
  const llm = createLlmClient(request.llm ? llmConfigFrom(request.llm) : llmConfigOf(conversation.metadata));
  return generateTitle(llm, message, request.max_length);
}

async function firstUserMessage(log: EventLog<Event>): Promise<string | undefined> {
  let pageId: string | undefined;
  do {
    const page = await log.search({ kind: 'MessageEvent', source: 'user', sortOrder: 'TIMESTAMP', limit: 100, pageId });
    for (const event of page.items) {
      const text = userMessageText(event);
      if (text !== undefined) return text;
    }
    pageId = page.nextPageId ?? undefined;
  } while (pageId);
  return undefined;
}
