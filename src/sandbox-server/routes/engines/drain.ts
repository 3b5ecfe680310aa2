import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { EngineInfoSchema, EngineNameParamsSchema } from '../../models/engine.js';
import { drainEngine } from '../../services/engines/drain-engine.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'post',
  path: '/api/v1/engines/{name}/drain',
  tags: ['Engines'],
  summary: 'Drain an engine (extension): no new sandboxes, its paused and idle ones move to other engines by snapshot, its warm-pool members are replaced elsewhere; progress in `drain`',
  request: { params: EngineNameParamsSchema },
  responses: {
    200: { description: 'The engine', content: { 'application/json': { schema: EngineInfoSchema } } },
    ...errorResponses(401, 403, 404),
  },
});

export const registerDrainEngine: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => c.json(await drainEngine(ctx, c.req.valid('param').name), 200));
};
