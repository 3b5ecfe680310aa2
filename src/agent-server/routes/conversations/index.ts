import type { OpenAPIHono } from '@hono/zod-openapi';
import type { ConversationContext } from '../../services/context.js';
import { registerAgentFinalResponse } from './agent-final-response.js';
import { registerAskAgent } from './ask-agent.js';
import { registerBatchGetConversations } from './batch-get-conversations.js';
import { registerCountConversations } from './count-conversations.js';
import { registerDeleteConversation } from './delete-conversation.js';
import { registerForkConversation } from './fork-conversation.js';
import { registerGenerateTitle } from './generate-title.js';
import { registerGetConversation } from './get-conversation.js';
import { registerPauseConversation } from './pause-conversation.js';
import { registerRunConversation } from './run-conversation.js';
import { registerSearchConversations } from './search-conversations.js';
import { registerSetConfirmationPolicy } from './set-confirmation-policy.js';
import { registerStartConversation } from './start-conversation.js';
import { registerSwitchProfile } from './switch-profile.js';
import { registerUpdateSecrets } from './update-secrets.js';
import { registerUpdateConversation } from './update-conversation.js';

export function registerConversationRoutes(app: OpenAPIHono, ctx: ConversationContext): void {
  registerStartConversation(app, ctx);
  registerBatchGetConversations(app, ctx);
  // Before /{conversation_id}, which would otherwise take "search" and "count" for ids.
  registerSearchConversations(app, ctx);
  registerCountConversations(app, ctx);
  registerGetConversation(app, ctx);
  registerUpdateConversation(app, ctx);
  registerDeleteConversation(app, ctx);
  registerRunConversation(app, ctx);
  registerPauseConversation(app, ctx);
  registerSetConfirmationPolicy(app, ctx);
  registerAgentFinalResponse(app, ctx);
  registerAskAgent(app, ctx);
  registerGenerateTitle(app, ctx);
  registerForkConversation(app, ctx);
  registerSwitchProfile(app, ctx);
  registerUpdateSecrets(app, ctx);
}
