import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { ConversationInfoSchema } from '../../../contracts/agent-server/conversation-info.js';
import { StartConversationRequestSchema } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../../services/context.js';
import { startConversation } from '../../services/conversations/start-conversation.js';
import { requireJsonBody } from '../json-body.js';
import { jsonContent, validationErrorResponse, workspaceUnusableResponse } from '../responses.js';

export const startConversationRoute = createRoute({
  method: 'post',
  path: '/api/conversations',
  tags: ['Conversations'],
  summary: 'Start a conversation',
  middleware: [requireJsonBody] as const,
  request: { body: { required: true, content: { 'application/json': { schema: StartConversationRequestSchema } } } },
  responses: {
    201: jsonContent(ConversationInfoSchema, 'The conversation was created'),
    200: jsonContent(ConversationInfoSchema, 'A conversation with that conversation_id already exists; it is unchanged'),
    ...validationErrorResponse,
    ...workspaceUnusableResponse,
  },
});

export function registerStartConversation(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(startConversationRoute, async (c) => {
    const { info, created } = await startConversation(ctx, c.req.valid('json'));
    return created ? c.json(info, 201) : c.json(info, 200);
  });
}
