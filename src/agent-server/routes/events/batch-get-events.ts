import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { EVENT_ID_MAX_LENGTH, EventSchema } from '../../../events/index.js';
import type { ConversationContext } from '../../services/context.js';
import { MAX_BATCH_EVENT_IDS, batchGetEvents } from '../../services/events/batch-get-events.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';


/** `?event_ids=a&event_ids=b`: one value arrives as a string, several as an array. */
const BatchEventsQuerySchema = z.object({
  event_ids: z
    .preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(z.string().min(1).max(EVENT_ID_MAX_LENGTH)).min(1))
    .openapi({ type: 'array', items: { type: 'string' }, description: `Event ids (at most ${MAX_BATCH_EVENT_IDS})` }),
});

export const batchGetEventsRoute = createRoute({
  method: 'get',
  path: '/api/conversations/{conversation_id}/events',
  tags: ['Events'],
  summary: 'Get events by id; null for each unknown one',
  request: { params: ConversationPathSchema, query: BatchEventsQuerySchema },
  responses: {
    200: jsonContent(z.array(EventSchema.nullable()), 'One entry per id, in order'),
    400: jsonContent(DetailSchema, `More than ${MAX_BATCH_EVENT_IDS} ids`),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
  },
});

export function registerBatchGetEvents(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(batchGetEventsRoute, async (c) => {
    const events = await batchGetEvents(ctx, { conversationId: c.req.valid('param').conversation_id, eventIds: c.req.valid('query').event_ids });
    return c.json(events, 200);
  });
}
