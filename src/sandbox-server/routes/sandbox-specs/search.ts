import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { SandboxSpecPageSchema, SearchSandboxSpecsQuerySchema } from '../../models/sandbox-spec.js';
import { searchSandboxSpecs } from '../../services/sandbox-specs/search-sandbox-specs.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'get',
  path: '/api/v1/sandbox-specs/search',
  tags: ['Sandbox specs'],
  summary: 'Search sandbox specs, by id',
  request: { query: SearchSandboxSpecsQuerySchema },
  responses: {
    200: { description: 'A page of sandbox specs', content: { 'application/json': { schema: SandboxSpecPageSchema } } },
    ...errorResponses(401),
  },
});

export const registerSearchSandboxSpecs: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    const query = c.req.valid('query');
    return c.json(await searchSandboxSpecs(ctx, { pageId: query.page_id, limit: query.limit }), 200);
  });
};
