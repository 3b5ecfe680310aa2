import { createRoute } from '@hono/zod-openapi';
import { errorResponses, SuccessSchema } from '../../models/common.js';
import { SandboxIdParamsSchema } from '../../models/sandbox.js';
import { deleteSandbox } from '../../services/sandboxes/delete-sandbox.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'delete',
  path: '/api/v1/sandboxes/{id}',
  tags: ['Sandboxes'],
  summary: 'Delete a sandbox and its data',
  request: { params: SandboxIdParamsSchema },
  responses: {
    200: { description: 'Recorded; the reconciler removes the container and its volume', content: { 'application/json': { schema: SuccessSchema } } },
    ...errorResponses(401, 404),
  },
});

export const registerDeleteSandbox: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    await deleteSandbox(ctx, c.req.valid('param').id);
    return c.json({ success: true as const }, 200);
  });
};
