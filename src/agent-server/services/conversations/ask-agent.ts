import { UpstreamError } from '../../../errors/index.js';
import { createLlmClient, LlmError } from '../../agent/llm/index.js';
import { askAgent as askWithHistory } from '../../conversations/ask-agent.js';
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
