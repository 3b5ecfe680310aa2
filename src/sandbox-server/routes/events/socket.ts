import type { WSContext } from 'hono/ws';
import { RequestValidationError, invalidValuesFromZod } from '../../../errors/index.js';
import { logger } from '../../../logger.js';
import { callerOf } from '../../auth.js';
import { StreamEventsQuerySchema } from '../../models/lifecycle-event.js';
import { followLifecycleEvents } from '../../services/lifecycle-events/follow-lifecycle-events.js';
import { requireUpgrade } from '../websocket-route.js';
import type { EventRouteRegistrar } from './deps.js';

/**
 * The stream as a WebSocket: one JSON text frame per event, the same filters and `after_event_id`.
 * The client only listens; the server closes with 1001 when it shuts down.
 */
export const registerEventSocket: EventRouteRegistrar = (app, deps) => {
  app.get('/api/v1/events/socket', async (c) => {
    // One value as a string, a repeated one as an array: as the OpenAPI routes see their queries.
    const raw = Object.fromEntries(Object.entries(c.req.queries()).map(([key, values]) => [key, values.length === 1 ? values[0] : values]));
    const parsed = StreamEventsQuerySchema.safeParse(raw);
    if (!parsed.success) throw new RequestValidationError(invalidValuesFromZod(parsed.error, 'query'));
    requireUpgrade(c.req.header('upgrade'));
    const query = parsed.data;
    const abort = new AbortController();
    const events = await followLifecycleEvents(deps.ctx, {
      types: query.type,
      sandboxId: query.sandbox_id,
      afterEventId: query.after_event_id,
      signal: abort.signal,
      keyId: callerOf(c).keyId,
    });
    return deps.upgradeWebSocket(c, {
      onOpen(_event, ws: WSContext) {
        void (async () => {
          for await (const event of events) {
            if (ws.readyState !== 1) break;
            ws.send(JSON.stringify(event));
          }
          if (deps.ctx.feed.closing.aborted && ws.readyState === 1) ws.close(1001, 'server shutting down');
        })().catch((err: unknown) => {
          logger.warn({ err }, 'lifecycle event socket failed');
          if (ws.readyState === 1) ws.close(1011, 'event stream failed');
        });
      },
      onClose() {
        abort.abort();
      },
    });
  });
};
