import type { OpenAPIHono } from '@hono/zod-openapi';
import type { NodeWebSocket } from '@hono/node-ws';
import type { LifecycleEventContext } from '../../services/lifecycle-events/context.js';

/** What the lifecycle event routes need besides the app. */
export interface EventRouteDeps {
  ctx: LifecycleEventContext;
  upgradeWebSocket: NodeWebSocket['upgradeWebSocket'];
}

export type EventRouteRegistrar = (app: OpenAPIHono, deps: EventRouteDeps) => void;
