import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { EventFilterQuerySchema } from '../../../contracts/agent-server/event-queries.js';
import { eventFilterOf } from './event-queries.js';
import type { ConversationContext } from '../../services/context.js';
import { countEvents } from '../../services/events/count-events.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, jsonContent, validationErrorResponse } from '../responses.js';

export const countEventsRoute = createRoute({
  method: 'get',
  path: '/api/conversations/{conversation_id}/events/count',
  tags: ['Events'],
  summary: 'Count conversation events',
  request: { params: ConversationPathSchema, query: EventFilterQuerySchema },
  responses: {
    200: jsonContent(z.int(), 'The number of events matching the filters of /events/search'),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
  },
});

export function registerCountEvents(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(countEventsRoute, async (c) => {
    const count = await countEvents(ctx, { conversationId: c.req.valid('param').conversation_id, filter: eventFilterOf(c.req.valid('query')) });
    return c.json(count, 200);
  });
}
