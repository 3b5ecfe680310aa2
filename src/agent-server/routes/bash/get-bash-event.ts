import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { BashEventLog } from '../../bash/bash-event-log.js';
import { NotFoundError } from '../../../errors/index.js';
import { DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';
import { BashEventSchema } from '../../../contracts/agent-server/bash.js';

const getRoute = createRoute({
  method: 'get',
  path: '/api/bash/bash_events/{event_id}',
  tags: ['Bash'],
  summary: 'Get a bash event',
  request: { params: z.object({ event_id: z.string().min(1) }) },
  responses: { 200: jsonContent(BashEventSchema, 'The event'), 404: jsonContent(DetailSchema, 'Not Found'), ...validationErrorResponse },
});

export function registerGetBashEvent(app: OpenAPIHono, events: BashEventLog): void {
  app.openapi(getRoute, (c) => {
    const event = events.get(c.req.valid('param').event_id);
    if (!event) throw new NotFoundError();
    return c.json(event, 200);
  });
}
