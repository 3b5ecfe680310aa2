import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { BashEventLog } from '../../bash/bash-event-log.js';
import { isTimestamp, timestampMillis } from '../../../events/index.js';
import { EVENT_SORT_ORDERS } from '../../../contracts/event-sort-order.js';
import { LimitQuerySchema, PageIdQuerySchema, pageSchema } from '../../../contracts/paging.js';
import { jsonContent, validationErrorResponse } from '../responses.js';
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
  sort_order: z.enum(EVENT_SORT_ORDERS).default('TIMESTAMP'),
  page_id: PageIdQuerySchema,
  limit: LimitQuerySchema,
});

const searchRoute = createRoute({
  method: 'get',
  path: '/api/bash/bash_events/search',
  tags: ['Bash'],
  summary: 'Search bash events',
  request: { query: BashEventSearchQuerySchema },
  responses: { 200: jsonContent(pageSchema(BashEventSchema).openapi('BashEventPage'), 'A page of bash events'), ...validationErrorResponse },
});

export function registerSearchBashEvents(app: OpenAPIHono, events: BashEventLog): void {
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
}
