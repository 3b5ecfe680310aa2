/** Reading and clearing the recorded bash events: search, get one, get a batch, clear all. */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { BashEventLog } from '../../bash/bash-event-log.js';
import { isTimestamp, timestampMillis } from '../../../events/index.js';
import { NotFoundError } from '../../../errors/index.js';
import { LimitQuerySchema, PageIdQuerySchema, pageSchema } from '../../../http/paging.js';
import { DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';
import { BashEventSchema } from '../../../contracts/agent-server/bash.js';

const TimestampQuerySchema = z
  .string()
  .refine(isTimestamp, 'Input should be a valid datetime')
  .openapi({ format: 'date-time' });

const BashEventSearchQuerySchema = z.object({
  kind__eq: z.enum(['BashCommand', 'BashOutput']).optional(),
  command_id__eq: z.uuid().optional(),
  timestamp__gte: TimestampQuerySchema.optional(),
  timestamp__lt: TimestampQuerySchema.optional(),
  order__gt: z.coerce.number().int().optional().openapi({ description: 'Only BashOutputs with a higher order' }),
  sort_order: z.enum(['TIMESTAMP', 'TIMESTAMP_DESC']).default('TIMESTAMP'),
  page_id: PageIdQuerySchema,
  limit: LimitQuerySchema,
});

/** `?event_ids=a&event_ids=b`: one value arrives as a string, several as an array. */
const BatchQuerySchema = z.object({
  event_ids: z.preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(z.string().min(1)).max(100)),
});

const searchRoute = createRoute({
  method: 'get',
  path: '/api/bash/bash_events/search',
  tags: ['Bash'],
  summary: 'Search bash events',
  request: { query: BashEventSearchQuerySchema },
  responses: { 200: jsonContent(pageSchema(BashEventSchema).openapi('BashEventPage'), 'A page of bash events'), ...validationErrorResponse },
});

const getRoute = createRoute({
  method: 'get',
  path: '/api/bash/bash_events/{event_id}',
  tags: ['Bash'],
  summary: 'Get a bash event',
  request: { params: z.object({ event_id: z.string().min(1) }) },
  responses: { 200: jsonContent(BashEventSchema, 'The event'), 404: jsonContent(DetailSchema, 'Not Found'), ...validationErrorResponse },
});

const batchGetRoute = createRoute({
  method: 'get',
  path: '/api/bash/bash_events/',
  tags: ['Bash'],
  summary: 'Get bash events by id; null for each unknown one',
  request: { query: BatchQuerySchema },
  responses: { 200: jsonContent(z.array(BashEventSchema.nullable()), 'One entry per id, in order'), ...validationErrorResponse },
});

const clearRoute = createRoute({
  method: 'delete',
  path: '/api/bash/bash_events',
  tags: ['Bash'],
  summary: 'Delete every recorded bash event',
  responses: { 200: jsonContent(z.object({ cleared_count: z.int() }), 'How many were deleted') },
});

export function registerBashEventRoutes(app: OpenAPIHono, events: BashEventLog): void {
  app.openapi(searchRoute, (c) => {
    const query = c.req.valid('query');
    const page = events.search({
      kind: query.kind__eq,
      commandId: query.command_id__eq,
      timestampGte: query.timestamp__gte === undefined ? undefined : timestampMillis(query.timestamp__gte),
      timestampLt: query.timestamp__lt === undefined ? undefined : timestampMillis(query.timestamp__lt),
      orderGt: query.order__gt,
      sortOrder: query.sort_order,
      pageId: query.page_id,
      limit: query.limit,
    });
    return c.json(page, 200);
  });
  app.openapi(batchGetRoute, (c) => c.json(c.req.valid('query').event_ids.map((id) => events.get(id) ?? null), 200));
  app.openapi(getRoute, (c) => {
    const event = events.get(c.req.valid('param').event_id);
    if (!event) throw new NotFoundError();
    return c.json(event, 200);
  });
  app.openapi(clearRoute, async (c) => c.json({ cleared_count: await events.clear() }, 200));
}
