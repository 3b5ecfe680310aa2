import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { EventSchema } from '../../../events/index.js';
import type { ConversationContext } from '../../services/context.js';
import { getEvent } from '../../services/events/get-event.js';
import { EventPathSchema } from '../params.js';
import { DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';

export const getEventRoute = createRoute({
  method: 'get',
  path: '/api/conversations/{conversation_id}/events/{event_id}',
  tags: ['Events'],
  summary: 'Get one event',
  request: { params: EventPathSchema },
  responses: {
    200: jsonContent(EventSchema, 'The event'),
    404: jsonContent(DetailSchema, 'Conversation not found, or Event not found'),
    ...validationErrorResponse,
  },
});

export function registerGetEvent(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(getEventRoute, async (c) => {
    const { conversation_id, event_id } = c.req.valid('param');
    return c.json(await getEvent(ctx, { conversationId: conversation_id, eventId: event_id }), 200);
  });
}
