import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { SandboxPageSchema, SearchSandboxesQuerySchema } from '../../models/sandbox.js';
import { searchSandboxes } from '../../services/sandboxes/search-sandboxes.js';
import { withPreviewUrls } from '../../services/sandboxes/sandbox-info.js';
import { previewBaseOf } from './preview-base.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'get',
  path: '/api/v1/sandboxes/search',
  tags: ['Sandboxes'],
  summary: 'Search sandboxes, newest first',
  request: { query: SearchSandboxesQuerySchema },
  responses: {
    200: { description: 'A page of sandboxes', content: { 'application/json': { schema: SandboxPageSchema } } },
    ...errorResponses(401),
  },
});

export const registerSearchSandboxes: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    const query = c.req.valid('query');
    const page = await searchSandboxes(ctx, { pageId: query.page_id, limit: query.limit, status: query.status });
    const base = previewBaseOf(c, ctx);
    return c.json({ ...page, items: page.items.map((info) => withPreviewUrls(info, base)) }, 200);
  });
};
