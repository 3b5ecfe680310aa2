import type { Event } from '../../events/index.js';
import { DEFAULT_SYSTEM_PROMPT } from '../agent/loop/system-prompt.js';
import { buildView, viewMessages } from '../agent/loop/llm-view.js';
import type { ChatMessage, LlmClient } from '../agent/llm/index.js';

/**
 * A side question to the conversation's LLM (OpenHands' ask_agent): the model sees what the agent
 * sees, then the question, with no tools, and its answer is returned without being recorded, so
 * the conversation's history and state stay as they were.
 */
export async function askAgent(llm: LlmClient, history: readonly Event[], question: string): Promise<string> {
  const messages: ChatMessage[] = viewMessages(buildView(history));
  if (messages[0]?.role !== 'system') messages.unshift({ role: 'system', content: DEFAULT_SYSTEM_PROMPT });
  messages.push({ role: 'user', content: question });
  const response = await llm.complete({ messages });
  return response.content ?? '';
}
