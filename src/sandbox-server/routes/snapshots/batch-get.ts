import { createRoute, z } from '@hono/zod-openapi';
import { BatchIdsQuerySchema, errorResponses } from '../../models/common.js';
import { SnapshotInfoSchema } from '../../models/snapshot.js';
import { getSnapshots } from '../../services/snapshots/get-snapshots.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'get',
  path: '/api/v1/snapshots',
  tags: ['Snapshots'],
  summary: 'Get snapshots by id (null for each unknown or deleted one)',
  request: { query: BatchIdsQuerySchema },
  responses: {
    200: { description: 'One entry per id', content: { 'application/json': { schema: z.array(SnapshotInfoSchema.nullable()) } } },
    ...errorResponses(400, 401),
  },
});

export const registerBatchGetSnapshots: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => c.json(await getSnapshots(ctx, c.req.valid('query').id), 200));
};
