import { createRoute } from '@hono/zod-openapi';
import { errorResponses, SuccessSchema } from '../../models/common.js';
import { SandboxIdParamsSchema } from '../../models/sandbox.js';
import { pauseSandbox } from '../../services/sandboxes/pause-sandbox.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'post',
  path: '/api/v1/sandboxes/{id}/pause',
  tags: ['Sandboxes'],
  summary: 'Pause a sandbox',
  request: { params: SandboxIdParamsSchema },
  responses: {
    200: { description: 'Recorded; the reconciler pauses the container', content: { 'application/json': { schema: SuccessSchema } } },
    ...errorResponses(401, 404, 409),
  },
});

export const registerPauseSandbox: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    await pauseSandbox(ctx, c.req.valid('param').id);
    return c.json({ success: true as const }, 200);
  });
};
