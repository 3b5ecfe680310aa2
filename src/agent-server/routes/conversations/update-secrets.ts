import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { UpdateSecretsRequestSchema } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../../services/context.js';
import { updateConversationSecrets } from '../../services/conversations/update-conversation-secrets.js';
import { requireJsonBody } from '../json-body.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, jsonContent, SuccessSchema, validationErrorResponse } from '../responses.js';

export const updateSecretsRoute = createRoute({
  method: 'post',
  path: '/api/conversations/{conversation_id}/secrets',
  tags: ['Conversations'],
  summary: "Add or replace secrets of a conversation (plain values, or StaticSecret and LookupSecret sources); the shell gets them before its next command",
  middleware: [requireJsonBody] as const,
  request: {
    params: ConversationPathSchema,
    body: { required: true, content: { 'application/json': { schema: UpdateSecretsRequestSchema.openapi('UpdateSecretsRequest') } } },
  },
  responses: {
    200: jsonContent(SuccessSchema, 'Updated'),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
  },
});

export function registerUpdateSecrets(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(updateSecretsRoute, async (c) => {
    await updateConversationSecrets(ctx, { conversationId: c.req.valid('param').conversation_id, secrets: c.req.valid('json').secrets });
    return c.json({ success: true }, 200);
  });
}
