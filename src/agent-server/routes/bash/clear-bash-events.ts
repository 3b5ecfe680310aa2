import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { BashEventLog } from '../../bash/bash-event-log.js';
import { jsonContent } from '../responses.js';

const clearRoute = createRoute({
  method: 'delete',
  path: '/api/bash/bash_events',
  tags: ['Bash'],
  summary: 'Delete every recorded bash event',
  responses: { 200: jsonContent(z.object({ cleared_count: z.int() }), 'How many were deleted') },
});

export function registerClearBashEvents(app: OpenAPIHono, events: BashEventLog): void {
  app.openapi(clearRoute, async (c) => c.json({ cleared_count: await events.clear() }, 200));
}
