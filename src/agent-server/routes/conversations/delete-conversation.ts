import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { ConversationContext } from '../../services/context.js';
import { deleteConversation } from '../../services/conversations/delete-conversation.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, jsonContent, SuccessSchema, validationErrorResponse } from '../responses.js';

export const deleteConversationRoute = createRoute({
  method: 'delete',
  path: '/api/conversations/{conversation_id}',
  tags: ['Conversations'],
  summary: 'Delete a conversation and its events',
  request: { params: ConversationPathSchema },
  responses: {
    200: jsonContent(SuccessSchema, 'Deleted'),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
  },
});

export function registerDeleteConversation(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(deleteConversationRoute, async (c) => {
    await deleteConversation(ctx, c.req.valid('param').conversation_id);
    return c.json({ success: true }, 200);
  });
}
