import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { UpdateConversationRequestSchema } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../../services/context.js';
import { updateConversation } from '../../services/conversations/update-conversation.js';
import { requireJsonBody } from '../json-body.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, jsonContent, SuccessSchema, validationErrorResponse } from '../responses.js';

export const updateConversationRoute = createRoute({
  method: 'patch',
  path: '/api/conversations/{conversation_id}',
  tags: ['Conversations'],
  summary: 'Change the title or tags of a conversation',
  middleware: [requireJsonBody] as const,
  request: {
    params: ConversationPathSchema,
    body: { required: true, content: { 'application/json': { schema: UpdateConversationRequestSchema } } },
  },
  responses: {
    200: jsonContent(SuccessSchema, 'Updated'),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
  },
});

export function registerUpdateConversation(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(updateConversationRoute, async (c) => {
    await updateConversation(ctx, { conversationId: c.req.valid('param').conversation_id, request: c.req.valid('json') });
    return c.json({ success: true }, 200);
  });
}
