import { createRoute, z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { logger } from '../../../logger.js';
import { errorResponses } from '../../models/common.js';
import { LastEventIdHeaderSchema, StreamEventsQuerySchema } from '../../models/lifecycle-event.js';
import type { EventRouteRegistrar } from './deps.js';
import { followQuery } from './follow.js';
import { streamStart } from './start-after.js';

/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

const route = createRoute({
  method: 'get',
  path: '/api/v1/events/stream',
  tags: ['Events'],
  summary: 'Follow lifecycle events as Server-Sent Events',
  description:
    'Each event is one message whose `id` is the event id and whose `data` is the event as JSON. ' +
    'Reconnect with `Last-Event-ID` (or `after_event_id`) to get every later event exactly once; ' +
    'without either the stream starts with the next event committed.',
  request: { query: StreamEventsQuerySchema, headers: LastEventIdHeaderSchema },
  responses: {
    200: { description: 'An endless stream of events', content: { 'text/event-stream': { schema: z.string() } } },
    ...errorResponses(401),
  },
});

export const registerStreamEvents: EventRouteRegistrar = (app, deps) => {
  app.openapi(route, async (c) => {
    const query = c.req.valid('query');
    const headers = c.req.valid('header');
    const afterId = await streamStart(deps.db, headers['last-event-id'], query.after_event_id);
    return streamSSE(c, async (stream) => {
      const abort = new AbortController();
      stream.onAbort(() => abort.abort());
      const keepalive = setInterval(() => void stream.write(': keepalive\n\n'), KEEPALIVE_MS);
      try {
        for await (const event of followQuery(deps, query, afterId, abort.signal)) await stream.writeSSE({ id: event.id, data: JSON.stringify(event) });
      } finally {
        clearInterval(keepalive);
      }
    }, async (err) => {
      logger.warn({ err }, 'lifecycle event stream failed');
    }) as never;
  });
};
