import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { SearchSnapshotsQuerySchema, SnapshotPageSchema } from '../../models/snapshot.js';
import { searchSnapshots } from '../../services/snapshots/search-snapshots.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'get',
  path: '/api/v1/snapshots/search',
  tags: ['Snapshots'],
  summary: 'Search snapshots, newest first',
  request: { query: SearchSnapshotsQuerySchema },
  responses: {
    200: { description: 'A page of snapshots', content: { 'application/json': { schema: SnapshotPageSchema } } },
    ...errorResponses(401),
  },
});

export const registerSearchSnapshots: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    const query = c.req.valid('query');
    const page = await searchSnapshots(ctx, {
      pageId: query.page_id,
      limit: query.limit,
      sandboxId: query.sandbox_id,
      specId: query.sandbox_spec_id,
    });
    return c.json(page, 200);
  });
};
