import type { OpenAPIHono } from '@hono/zod-openapi';
import type { NodeWebSocket } from '@hono/node-ws';
import type { Database } from '../../db/client.js';
import type { EventFeed } from '../../lifecycle-events/event-feed.js';

/** What the lifecycle event routes need besides the app. */
export interface EventRouteDeps {
  db: Database;
  feed: EventFeed;
  upgradeWebSocket: NodeWebSocket['upgradeWebSocket'];
}

export type EventRouteRegistrar = (app: OpenAPIHono, deps: EventRouteDeps) => void;
