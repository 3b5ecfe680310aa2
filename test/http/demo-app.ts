import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { createApiApp } from '../../src/http/app.js';
import { NotFoundError } from '../../src/errors/index.js';

const ThingSchema = z.object({ id: z.string(), name: z.string() }).openapi('Thing');
const ThingParamsSchema = z.object({ thing_id: z.string().min(1) });

export const getThingRoute = createRoute({
  method: 'get',
  path: '/api/v1/things/{thing_id}',
  tags: ['Things'],
  summary: 'Get a thing',
  request: { params: ThingParamsSchema },
  responses: { 200: { description: 'The thing', content: { 'application/json': { schema: ThingSchema } } } },
});

export const pauseThingRoute = createRoute({
  method: 'post',
  path: '/api/v1/things/{thing_id}/pause',
  tags: ['Things'],
  summary: 'Pause a thing',
  request: { params: ThingParamsSchema },
  responses: {
    200: { description: 'Paused', content: { 'application/json': { schema: z.object({ success: z.boolean() }) } } },
  },
});

/** The things every demo app serves, as `"METHOD /openapi/path"`. */
export const DEMO_ROUTES = ['GET /api/v1/things/{thing_id}', 'POST /api/v1/things/{thing_id}/pause'];

/**
 * A small API built the way both servers are (createApiApp + createRoute), for the docs, metrics and
 * logging tests. Middleware goes on first so it wraps the routes.
 */
export function createDemoApp(setUp: (app: OpenAPIHono) => void = () => {}): OpenAPIHono {
  const app = createApiApp();
  setUp(app);
  app.openapi(getThingRoute, (c) => {
    const { thing_id } = c.req.valid('param');
    if (thing_id === 'missing') throw new NotFoundError('Thing not found');
    if (thing_id === 'broken') throw new Error('thing store exploded');
    c.var.logger?.info({ thing_id }, 'looked up a thing');
    return c.json({ id: thing_id, name: 'a thing' }, 200);
  });
  app.openapi(pauseThingRoute, (c) => c.json({ success: true }, 200));
  return app;
}
