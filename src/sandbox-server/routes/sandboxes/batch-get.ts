import { createRoute, z } from '@hono/zod-openapi';
import { BatchIdsQuerySchema, errorResponses } from '../../models/common.js';
import { SandboxInfoSchema } from '../../models/sandbox.js';
import { getSandboxes } from '../../services/sandboxes/get-sandboxes.js';
import { withPreviewUrls } from '../../services/sandboxes/sandbox-info.js';
import { previewBaseOf } from './preview-base.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'get',
  path: '/api/v1/sandboxes',
  tags: ['Sandboxes'],
  summary: 'Get sandboxes by id (null for each unknown or deleted one)',
  request: { query: BatchIdsQuerySchema },
  responses: {
    200: { description: 'One entry per id', content: { 'application/json': { schema: z.array(SandboxInfoSchema.nullable()) } } },
    ...errorResponses(400, 401),
  },
});

export const registerBatchGetSandboxes: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    const base = previewBaseOf(c, ctx);
    return c.json((await getSandboxes(ctx, c.req.valid('query').id)).map((info) => info && withPreviewUrls(info, base)), 200);
  });
};
