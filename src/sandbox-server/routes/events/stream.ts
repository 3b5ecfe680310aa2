import { createRoute, z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { logger } from '../../../logger.js';
import { callerOf } from '../../auth.js';
import { errorResponses } from '../../models/common.js';
import { LastEventIdHeaderSchema, StreamEventsQuerySchema } from '../../models/lifecycle-event.js';
import { followLifecycleEvents } from '../../services/lifecycle-events/follow-lifecycle-events.js';
import type { EventRouteRegistrar } from './deps.js';

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
    ...errorResponses(401, 429),
  },
});

export const registerStreamEvents: EventRouteRegistrar = (app, deps) => {
  app.openapi(route, async (c) => {
    const query = c.req.valid('query');
    const headers = c.req.valid('header');
    const abort = new AbortController();
    const events = await followLifecycleEvents(deps.ctx, {
      types: query.type,
      sandboxId: query.sandbox_id,
      lastEventId: headers['last-event-id'],
      afterEventId: query.after_event_id,
      signal: abort.signal,
      keyId: callerOf(c).keyId,
    });
    return streamSSE(c, async (stream) => {
      stream.onAbort(() => abort.abort());
      const keepalive = setInterval(() => void stream.write(': keepalive\n\n'), KEEPALIVE_MS);
      try {
        for await (const event of events) await stream.writeSSE({ id: event.id, data: JSON.stringify(event) });
      } finally {
        clearInterval(keepalive);
      }
    }, async (err) => {
      logger.warn({ err }, 'lifecycle event stream failed');
    }) as never;
  });
};
