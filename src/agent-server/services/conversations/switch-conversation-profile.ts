import { NotFoundError } from '../../../errors/index.js';
import type { ConversationContext } from '../context.js';

/**
 * OpenHands switches to an LLM profile saved on the agent-server; this server keeps no profiles,
 * so every name is unknown, as OpenHands answers for a profile it does not have.
 */
export function switchConversationProfile(ctx: ConversationContext, input: { conversationId: string; profileName: string }): never {
  ctx.conversations.require(input.conversationId);
  throw new NotFoundError(`Profile '${input.profileName}' not found`);
}
