import { createRoute } from '@hono/zod-openapi';
import { errorResponses, SuccessSchema } from '../../models/common.js';
import { SandboxSpecIdParamsSchema } from '../../models/sandbox-spec.js';
import { deleteSandboxSpec } from '../../services/sandbox-specs/delete-sandbox-spec.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'delete',
  path: '/api/v1/sandbox-specs/{id}',
  tags: ['Sandbox specs'],
  summary: 'Delete a sandbox spec no live sandbox uses (extension)',
  description: 'Ids containing "/" (image names) are sent percent-encoded (%2F).',
  request: { params: SandboxSpecIdParamsSchema },
  responses: {
    200: { description: 'Deleted', content: { 'application/json': { schema: SuccessSchema } } },
    ...errorResponses(401, 404, 409),
  },
});

export const registerDeleteSandboxSpec: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    await deleteSandboxSpec(ctx, c.req.valid('param').id);
    return c.json({ success: true as const }, 200);
  });
};
