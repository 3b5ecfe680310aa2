import type { OpenAPIHono } from '@hono/zod-openapi';
import type { ConversationService } from '../../conversations/service.js';
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

export function registerConversationRoutes(app: OpenAPIHono, conversations: ConversationService): void {
  registerStartConversation(app, conversations);
  registerBatchGetConversations(app, conversations);
  // Before /{conversation_id}, which would otherwise take "search" and "count" for ids.
  registerSearchConversations(app, conversations);
  registerCountConversations(app, conversations);
  registerGetConversation(app, conversations);
  registerUpdateConversation(app, conversations);
  registerDeleteConversation(app, conversations);
  registerRunConversation(app, conversations);
  registerPauseConversation(app, conversations);
  registerSetConfirmationPolicy(app, conversations);
  registerAgentFinalResponse(app, conversations);
  registerAskAgent(app, conversations);
  registerGenerateTitle(app, conversations);
  registerForkConversation(app, conversations);
  registerSwitchProfile(app, conversations);
  registerUpdateSecrets(app, conversations);
}
