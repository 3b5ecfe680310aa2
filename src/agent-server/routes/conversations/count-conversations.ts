import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { ConversationCountQuerySchema } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../../services/context.js';
import { countConversations } from '../../services/conversations/count-conversations.js';
import { jsonContent, validationErrorResponse } from '../responses.js';

export const countConversationsRoute = createRoute({
  method: 'get',
  path: '/api/conversations/count',
  tags: ['Conversations'],
  summary: 'Count conversations',
  request: { query: ConversationCountQuerySchema },
  responses: {
    200: jsonContent(z.int(), 'The number of conversations with that status (all when no status is given)'),
    ...validationErrorResponse,
  },
});

export function registerCountConversations(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(countConversationsRoute, (c) => c.json(countConversations(ctx, c.req.valid('query').status), 200));
}
