import { createRoute, z } from '@hono/zod-openapi';
import { BatchIdsQuerySchema, errorResponses } from '../../models/common.js';
import { SandboxSpecInfoSchema } from '../../models/sandbox-spec.js';
import { getSandboxSpecs } from '../../services/sandbox-specs/get-sandbox-specs.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'get',
  path: '/api/v1/sandbox-specs',
  tags: ['Sandbox specs'],
  summary: 'Get sandbox specs by id (null for each unknown or deleted one)',
  request: { query: BatchIdsQuerySchema },
  responses: {
    200: { description: 'One entry per id', content: { 'application/json': { schema: z.array(SandboxSpecInfoSchema.nullable()) } } },
    ...errorResponses(400, 401),
  },
});

export const registerBatchGetSandboxSpecs: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => c.json(await getSandboxSpecs(ctx, c.req.valid('query').id), 200));
};
