import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { ConversationCountQuerySchema } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationService } from '../../conversations/service.js';
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

export function registerCountConversations(app: OpenAPIHono, conversations: ConversationService): void {
  app.openapi(countConversationsRoute, (c) => c.json(conversations.count(c.req.valid('query').status), 200));
}
