import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { SandboxEgressInfoSchema, UpdateSandboxRequestSchema } from '../../models/egress-policy.js';
import { SandboxIdParamsSchema } from '../../models/sandbox.js';
import { updateSandboxEgress } from '../../services/egress/update-sandbox-egress.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'patch',
  path: '/api/v1/sandboxes/{id}',
  tags: ['Sandboxes'],
  summary: "Change a sandbox's egress policy (our extension)",
  description: 'Takes effect at once for new connections and DNS questions: the answer comes once this replica enforces it.',
  request: { params: SandboxIdParamsSchema, body: { content: { 'application/json': { schema: UpdateSandboxRequestSchema } }, required: true } },
  responses: {
    200: { description: 'The policy now in force', content: { 'application/json': { schema: SandboxEgressInfoSchema } } },
    ...errorResponses(401, 404, 409, 422),
  },
});

export const registerUpdateSandbox: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    const { egress } = c.req.valid('json');
    return c.json(await updateSandboxEgress(ctx, { id: c.req.valid('param').id, egress }), 200);
  });
};
