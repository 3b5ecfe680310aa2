import type { ConversationContext } from '../context.js';

/** The LLM model of each conversation, in no particular order. */
export function listConversationModels(ctx: ConversationContext): string[] {
  return ctx.conversations.all().map((m) => m.agent.llm.model);
}
