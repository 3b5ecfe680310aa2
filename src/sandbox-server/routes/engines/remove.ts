import { createRoute } from '@hono/zod-openapi';
import { errorResponses, SuccessSchema } from '../../models/common.js';
import { EngineNameParamsSchema } from '../../models/engine.js';
import { removeEngine } from '../../services/engines/remove-engine.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'delete',
  path: '/api/v1/engines/{name}',
  tags: ['Engines'],
  summary: 'Remove an engine (extension); 409 while a live sandbox or a snapshot is on it',
  request: { params: EngineNameParamsSchema },
  responses: {
    200: { description: 'Removed', content: { 'application/json': { schema: SuccessSchema } } },
    ...errorResponses(401, 403, 404, 409),
  },
});

export const registerRemoveEngine: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    await removeEngine(ctx, c.req.valid('param').name);
    return c.json({ success: true as const }, 200);
  });
};
