import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { ConversationContext } from '../../services/context.js';
import { pauseConversation } from '../../services/conversations/pause-conversation.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, jsonContent, SuccessSchema, validationErrorResponse, workspaceUnusableResponse } from '../responses.js';

export const pauseConversationRoute = createRoute({
  method: 'post',
  path: '/api/conversations/{conversation_id}/pause',
  tags: ['Conversations'],
  summary: 'Pause the agent',
  description: 'Records a PauseEvent (source user) unless the conversation is already paused.',
  request: { params: ConversationPathSchema },
  responses: {
    200: jsonContent(SuccessSchema, 'Paused'),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
    ...workspaceUnusableResponse,
  },
});

export function registerPauseConversation(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(pauseConversationRoute, async (c) => {
    await pauseConversation(ctx, c.req.valid('param').conversation_id);
    return c.json({ success: true }, 200);
  });
}
