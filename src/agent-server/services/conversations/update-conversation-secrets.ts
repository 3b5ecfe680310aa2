import type { Secrets } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../context.js';

/** Adds or replaces secrets; the others are kept. The shell gets the new values before its next command. */
export async function updateConversationSecrets(ctx: ConversationContext, input: { conversationId: string; secrets: Secrets }): Promise<void> {
  const conversation = ctx.conversations.require(input.conversationId);
  conversation.secrets.update(input.secrets);
  await ctx.conversations.changeMetadata(conversation, { secrets: { ...conversation.metadata.secrets, ...input.secrets } });
}
