import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { EngineInfoSchema, EngineNameParamsSchema } from '../../models/engine.js';
import { cordonEngine } from '../../services/engines/cordon-engine.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'post',
  path: '/api/v1/engines/{name}/cordon',
  tags: ['Engines'],
  summary: 'Cordon an engine (extension): no new sandboxes are placed on it; 409 while it drains',
  request: { params: EngineNameParamsSchema },
  responses: {
    200: { description: 'The engine', content: { 'application/json': { schema: EngineInfoSchema } } },
    ...errorResponses(401, 403, 404, 409),
  },
});

export const registerCordonEngine: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => c.json(await cordonEngine(ctx, c.req.valid('param').name), 200));
};
