import { createRoute } from '@hono/zod-openapi';
import { errorResponses, SuccessSchema } from '../../models/common.js';
import { SandboxIdParamsSchema } from '../../models/sandbox.js';
import { resumeSandbox } from '../../services/sandboxes/resume-sandbox.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'post',
  path: '/api/v1/sandboxes/{id}/resume',
  tags: ['Sandboxes'],
  summary: 'Resume a sandbox',
  request: { params: SandboxIdParamsSchema },
  responses: {
    200: { description: 'Recorded; the reconciler resumes the container', content: { 'application/json': { schema: SuccessSchema } } },
    ...errorResponses(401, 404, 409),
  },
});

export const registerResumeSandbox: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    await resumeSandbox(ctx, c.req.valid('param').id);
    return c.json({ success: true as const }, 200);
  });
};
