import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { EventSchema } from '../../../events/index.js';
import { pageSchema } from '../../../contracts/paging.js';
import { EventSearchQuerySchema } from '../../../contracts/agent-server/event-queries.js';
import { eventQueryOf } from './event-queries.js';
import type { ConversationContext } from '../../services/context.js';
import { searchEvents } from '../../services/events/search-events.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, jsonContent, validationErrorResponse } from '../responses.js';

export const searchEventsRoute = createRoute({
  method: 'get',
  path: '/api/conversations/{conversation_id}/events/search',
  tags: ['Events'],
  summary: 'Search conversation events',
  request: { params: ConversationPathSchema, query: EventSearchQuerySchema },
  responses: {
    200: jsonContent(pageSchema(EventSchema), 'A page of events; pass next_page_id as page_id for the next one'),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
  },
});

export function registerSearchEvents(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(searchEventsRoute, async (c) => {
    const page = await searchEvents(ctx, { conversationId: c.req.valid('param').conversation_id, query: eventQueryOf(c.req.valid('query')) });
    return c.json(page, 200);
  });
}
