import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { SwitchProfileRequestSchema } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationService } from '../../conversations/service.js';
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

export function registerSwitchProfile(app: OpenAPIHono, conversations: ConversationService): void {
  app.openapi(switchProfileRoute, (c) =>
    conversations.switchProfile(c.req.valid('param').conversation_id, c.req.valid('json').profile_name),
  );
}
