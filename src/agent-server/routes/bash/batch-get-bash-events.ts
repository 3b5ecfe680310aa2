import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { BashEventLog } from '../../bash/bash-event-log.js';
import { jsonContent, validationErrorResponse } from '../responses.js';
import { BashEventSchema } from '../../../contracts/agent-server/bash.js';

/** `?event_ids=a&event_ids=b`: one value arrives as a string, several as an array. */
const BatchQuerySchema = z.object({
  event_ids: z.preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(z.string().min(1)).max(100)),
});

const batchGetRoute = createRoute({
  method: 'get',
  path: '/api/bash/bash_events/',
  tags: ['Bash'],
  summary: 'Get bash events by id; null for each unknown one',
  request: { query: BatchQuerySchema },
  responses: { 200: jsonContent(z.array(BashEventSchema.nullable()), 'One entry per id, in order'), ...validationErrorResponse },
});

export function registerBatchGetBashEvents(app: OpenAPIHono, events: BashEventLog): void {
  app.openapi(batchGetRoute, (c) => c.json(c.req.valid('query').event_ids.map((id) => events.get(id) ?? null), 200));
}
