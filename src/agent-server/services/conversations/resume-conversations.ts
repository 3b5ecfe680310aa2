import type { ConversationContext } from '../context.js';
import { runConversation } from './run-conversation.js';

/** At start: an agent that was running when the process stopped carries on where its log ends. */
export function resumeConversations(ctx: ConversationContext): void {
  for (const metadata of ctx.conversations.all()) {
    if (metadata.execution_status === 'running') void runConversation(ctx, metadata.id);
  }
}
