import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { ErrorDetailSchema } from '../models/common.js';
import type { ServiceContext } from '../services/context.js';
import { checkHealth } from '../services/health/check-health.js';

const StatusSchema = z.object({ status: z.literal('ok') }).openapi('HealthStatus');

const aliveRoute = createRoute({
  method: 'get',
  path: '/alive',
  tags: ['Health'],
  summary: 'The process answers',
  responses: { 200: { description: 'Alive', content: { 'application/json': { schema: StatusSchema } } } },
});

const healthRoute = createRoute({
  method: 'get',
  path: '/health',
  tags: ['Health'],
  summary: 'The process answers and its database does too',
  responses: {
    200: { description: 'Healthy', content: { 'application/json': { schema: StatusSchema } } },
    503: { description: 'The database does not answer', content: { 'application/json': { schema: ErrorDetailSchema } } },
  },
});

/** /alive and /health, both open: load balancers and orchestrators call them without a key. */
export function registerHealthRoutes(app: OpenAPIHono, ctx: ServiceContext): void {
  app.openapi(aliveRoute, (c) => c.json({ status: 'ok' as const }, 200));
  app.openapi(healthRoute, async (c) => {
    await checkHealth(ctx);
    return c.json({ status: 'ok' as const }, 200);
  });
}
