import type { Event } from '../../events/index.js';
import { LlmError, type LlmClient } from '../agent/llm/index.js';

/** Longer first messages are cut before they reach the LLM, as OpenHands does, to bound the tokens spent. */
const MAX_PROMPT_MESSAGE_CHARS = 1000;

const SYSTEM_PROMPT =
  'You are a helpful assistant that generates concise, descriptive titles for conversations with an ' +
  'AI agent that can interact with a computer to solve tasks using a bash terminal and a file editor. ' +
  'Given a user message (which may be truncated), generate a concise, descriptive title for the ' +
  'conversation. Return only the title, with no additional text, quotes, or explanations.';

/** The text of a user message, its text parts joined by spaces; undefined for other events and messages without text. */
export function userMessageText(event: Event): string | undefined {
  if (event.kind !== 'MessageEvent' || event.source !== 'user') return undefined;
  const text = event.llm_message.content
    .flatMap((item) => (item.type === 'text' ? [item.text] : []))
    .join(' ')
    .trim();
  return text || undefined;
}

/** `title` cut to `maxLength` characters, its end marked with "...". */
export function clipTitle(title: string, maxLength: number): string {
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
export async function generateTitle(llm: LlmClient, message: string, maxLength: number): Promise<string> {
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
