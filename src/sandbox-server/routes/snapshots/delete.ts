import { createRoute } from '@hono/zod-openapi';
import { errorResponses, SuccessSchema } from '../../models/common.js';
import { SnapshotIdParamsSchema } from '../../models/snapshot.js';
import { deleteSnapshot } from '../../services/snapshots/delete-snapshot.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'delete',
  path: '/api/v1/snapshots/{id}',
  tags: ['Snapshots'],
  summary: 'Delete a snapshot (its image and volume); 409 while a live sandbox was started from it',
  request: { params: SnapshotIdParamsSchema },
  responses: {
    200: { description: 'Deleted', content: { 'application/json': { schema: SuccessSchema } } },
    ...errorResponses(401, 404, 409),
  },
});

export const registerDeleteSnapshot: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    await deleteSnapshot(ctx, c.req.valid('param').id);
    return c.json({ success: true as const }, 200);
  });
};
