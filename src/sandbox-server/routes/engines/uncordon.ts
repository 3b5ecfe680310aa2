import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { EngineInfoSchema, EngineNameParamsSchema } from '../../models/engine.js';
import { uncordonEngine } from '../../services/engines/uncordon-engine.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'post',
  path: '/api/v1/engines/{name}/uncordon',
  tags: ['Engines'],
  summary: 'Uncordon an engine (extension): it takes new sandboxes again',
  request: { params: EngineNameParamsSchema },
  responses: {
    200: { description: 'The engine', content: { 'application/json': { schema: EngineInfoSchema } } },
    ...errorResponses(401, 403, 404),
  },
});

export const registerUncordonEngine: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => c.json(await uncordonEngine(ctx, c.req.valid('param').name), 200));
};
