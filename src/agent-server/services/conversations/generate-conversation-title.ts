import type { GenerateTitleRequest } from '../../../contracts/agent-server/conversation-requests.js';
import { ConflictError } from '../../../errors/index.js';
import type { Event } from '../../../events/index.js';
import { createLlmClient, llmConfigFrom, LlmError, type LlmClient } from '../../agent/llm/index.js';
import { llmConfigOf } from '../../conversations/conversation-runner.js';
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

/** Longer first messages are cut before they reach the LLM, as OpenHands does, to bound the tokens spent. */
const MAX_PROMPT_MESSAGE_CHARS = 1000;

const SYSTEM_PROMPT =
  'You are a helpful assistant that generates concise, descriptive titles for conversations with an ' +
  'AI agent that can interact with a computer to solve tasks using a bash terminal and a file editor. ' +
  'Given a user message (which may be truncated), generate a concise, descriptive title for the ' +
  'conversation. Return only the title, with no additional text, quotes, or explanations.';

/** The text of a user message, its text parts joined by spaces; undefined for other events and messages without text. */
function userMessageText(event: Event): string | undefined {
  if (event.kind !== 'MessageEvent' || event.source !== 'user') return undefined;
  const text = event.llm_message.content
    .flatMap((item) => (item.type === 'text' ? [item.text] : []))
    .join(' ')
    .trim();
  return text || undefined;
}

/** `title` cut to `maxLength` characters, its end marked with "...". */
function clipTitle(title: string, maxLength: number): string {
  return title.length > maxLength ? `${title.slice(0, Math.max(0, maxLength - 3))}...` : title;
}

function userPrompt(message: string, maxLength: number): string {
  const clipped = message.length > MAX_PROMPT_MESSAGE_CHARS ? `${message.slice(0, MAX_PROMPT_MESSAGE_CHARS)}...(truncated)` : message;
  return `Generate a title (maximum ${maxLength} characters) for a conversation that starts with this message:\n\n${clipped}`;
}

/**
 * A title for a conversation that starts with `message` (OpenHands' generate_title): the LLM's
 * answer, clipped to `maxLength`; when the LLM fails or answers nothing, the message itself,
 * clipped. A title is always produced, as there: naming a conversation must not depend on the model.
 */
async function generateTitle(llm: LlmClient, message: string, maxLength: number): Promise<string> {
  try {
    const response = await llm.complete({
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: userPrompt(message, maxLength) },
      ],
    });
    const title = response.content?.trim();
    if (title) return clipTitle(title, maxLength);
  } catch (error) {
    // The model is an aid here, not a requirement: its failure falls back to the message.
    if (!(error instanceof LlmError)) throw error;
  }
  return clipTitle(message.trim(), maxLength);
}
