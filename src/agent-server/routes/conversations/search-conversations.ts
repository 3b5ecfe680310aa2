import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { ConversationPageSchema } from '../../../contracts/agent-server/conversation-info.js';
import { ConversationSearchQuerySchema } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../../services/context.js';
import { searchConversations } from '../../services/conversations/search-conversations.js';
import { jsonContent, validationErrorResponse } from '../responses.js';

export const searchConversationsRoute = createRoute({
  method: 'get',
  path: '/api/conversations/search',
  tags: ['Conversations'],
  summary: 'Search conversations',
  request: { query: ConversationSearchQuerySchema },
  responses: {
    200: jsonContent(ConversationPageSchema, 'A page of conversations'),
    ...validationErrorResponse,
  },
});

export function registerSearchConversations(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(searchConversationsRoute, (c) => {
    const query = c.req.valid('query');
    const page = searchConversations(ctx, {
      status: query.status,
      sortOrder: query.sort_order,
      pageId: query.page_id,
      limit: query.limit,
    });
    return c.json(page, 200);
  });
}
