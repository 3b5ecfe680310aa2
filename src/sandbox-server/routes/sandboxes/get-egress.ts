import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { SandboxEgressInfoSchema } from '../../models/egress-policy.js';
import { SandboxIdParamsSchema } from '../../models/sandbox.js';
import { getSandboxEgress } from '../../services/egress/get-sandbox-egress.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'get',
  path: '/api/v1/sandboxes/{id}/egress',
  tags: ['Sandboxes'],
  summary: 'What a sandbox may reach: its network and egress policy (our extension)',
  request: { params: SandboxIdParamsSchema },
  responses: {
    200: { description: 'The policy in force', content: { 'application/json': { schema: SandboxEgressInfoSchema } } },
    ...errorResponses(401, 404, 409),
  },
});

export const registerGetSandboxEgress: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => c.json(await getSandboxEgress(ctx, c.req.valid('param').id), 200));
};
