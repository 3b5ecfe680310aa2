import type { WSContext } from 'hono/ws';
import { RequestValidationError, invalidValuesFromZod } from '../../../errors/index.js';
import { logger } from '../../../logger.js';
import { StreamEventsQuerySchema } from '../../models/lifecycle-event.js';
import { requireUpgrade } from '../websocket-route.js';
import type { EventRouteRegistrar } from './deps.js';
import { followQuery } from './follow.js';
import { streamStart } from './start-after.js';

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
    const afterId = await streamStart(deps.db, undefined, query.after_event_id);
    const abort = new AbortController();
    return deps.upgradeWebSocket(c, {
      onOpen(_event, ws: WSContext) {
        void (async () => {
          for await (const event of followQuery(deps, query, afterId, abort.signal)) {
            if (ws.readyState !== 1) break;
            ws.send(JSON.stringify(event));
          }
          if (deps.feed.closing.aborted && ws.readyState === 1) ws.close(1001, 'server shutting down');
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
