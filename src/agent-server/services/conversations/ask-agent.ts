import { UpstreamError } from '../../../errors/index.js';
import type { Event } from '../../../events/index.js';
import { createLlmClient, LlmError, type ChatMessage, type LlmClient } from '../../agent/llm/index.js';
import { buildView, viewMessages } from '../../agent/loop/llm-view.js';
import { DEFAULT_SYSTEM_PROMPT } from '../../agent/loop/system-prompt.js';
import { llmConfigOf } from '../../conversations/conversation-runner.js';
import type { ConversationContext } from '../context.js';

/** A side question to the conversation's LLM; nothing is recorded. An LLM failure is an upstream error. */
export async function askAgent(ctx: ConversationContext, input: { conversationId: string; question: string }): Promise<string> {
  const conversation = ctx.conversations.require(input.conversationId);
  const log = await ctx.conversations.openLog(conversation);
  const history = await log.readRange(0, log.size);
  try {
    return await askWithHistory(createLlmClient(llmConfigOf(conversation.metadata)), history, input.question);
  } catch (error) {
    if (error instanceof LlmError) throw new UpstreamError(`The LLM failed to answer: ${error.message}`);
    throw error;
  }
}

/**
 * OpenHands' ask_agent: the model sees what the agent sees, then the question, with no tools, and
 * its answer is returned without being recorded, so the conversation's history and state stay as
 * they were.
 */
async function askWithHistory(llm: LlmClient, history: readonly Event[], question: string): Promise<string> {
  const messages: ChatMessage[] = viewMessages(buildView(history));
  if (messages[0]?.role !== 'system') messages.unshift({ role: 'system', content: DEFAULT_SYSTEM_PROMPT });
  messages.push({ role: 'user', content: question });
  const response = await llm.complete({ messages });
  return response.content ?? '';
}
