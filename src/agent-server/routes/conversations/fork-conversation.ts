import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { ConversationInfoSchema } from '../../../contracts/agent-server/conversation-info.js';
import { ForkConversationRequestSchema } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../../services/context.js';
import { forkConversation } from '../../services/conversations/fork-conversation.js';
import { requireJsonBody } from '../json-body.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';

export const forkConversationRoute = createRoute({
  method: 'post',
  path: '/api/conversations/{conversation_id}/fork',
  tags: ['Conversations'],
  summary: 'Copy a conversation, its settings and its whole history, into a new idle conversation',
  middleware: [requireJsonBody] as const,
  request: {
    params: ConversationPathSchema,
    body: { required: true, content: { 'application/json': { schema: ForkConversationRequestSchema.openapi('ForkConversationRequest') } } },
  },
  responses: {
    201: jsonContent(ConversationInfoSchema, 'The fork'),
    ...conversationNotFoundResponse,
    409: jsonContent(DetailSchema, 'A conversation with the requested id already exists'),
    ...validationErrorResponse,
  },
});

export function registerForkConversation(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(forkConversationRoute, async (c) => {
    const fork = await forkConversation(ctx, { conversationId: c.req.valid('param').conversation_id, request: c.req.valid('json') });
    return c.json(fork, 201);
  });
}
