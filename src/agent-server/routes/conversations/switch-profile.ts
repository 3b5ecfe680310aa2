import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { SwitchProfileRequestSchema } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../../services/context.js';
import { switchConversationProfile } from '../../services/conversations/switch-conversation-profile.js';
import { requireJsonBody } from '../json-body.js';
import { ConversationPathSchema } from '../params.js';
import { DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';

export const switchProfileRoute = createRoute({
  method: 'post',
  path: '/api/conversations/{conversation_id}/switch_profile',
  tags: ['Conversations'],
  summary: 'Switch to a saved LLM profile: this server keeps none, so the profile is always unknown',
  middleware: [requireJsonBody] as const,
  request: {
    params: ConversationPathSchema,
    body: { required: true, content: { 'application/json': { schema: SwitchProfileRequestSchema.openapi('SwitchProfileRequest') } } },
  },
  responses: {
    404: jsonContent(DetailSchema, 'Conversation or profile not found'),
    ...validationErrorResponse,
  },
});

export function registerSwitchProfile(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(switchProfileRoute, (c) =>
    switchConversationProfile(ctx, { conversationId: c.req.valid('param').conversation_id, profileName: c.req.valid('json').profile_name }),
  );
}
