import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { ConversationInfoSchema } from '../../../contracts/agent-server/conversation-info.js';
import type { ConversationContext } from '../../services/context.js';
import { getConversation } from '../../services/conversations/get-conversation.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, jsonContent, validationErrorResponse } from '../responses.js';

export const getConversationRoute = createRoute({
  method: 'get',
  path: '/api/conversations/{conversation_id}',
  tags: ['Conversations'],
  summary: 'Get a conversation',
  request: { params: ConversationPathSchema },
  responses: {
    200: jsonContent(ConversationInfoSchema, 'The conversation'),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
  },
});

export function registerGetConversation(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(getConversationRoute, (c) => c.json(getConversation(ctx, c.req.valid('param').conversation_id), 200));
}
