import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { EnginePageSchema, SearchEnginesQuerySchema } from '../../models/engine.js';
import { searchEngines } from '../../services/engines/search-engines.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'get',
  path: '/api/v1/engines',
  tags: ['Engines'],
  summary: 'List the engines by name (extension), with their state, health and sandbox counts; `name` picks one',
  request: { query: SearchEnginesQuerySchema },
  responses: {
    200: { description: 'A page of engines', content: { 'application/json': { schema: EnginePageSchema } } },
    ...errorResponses(401),
  },
});

export const registerSearchEngines: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    const query = c.req.valid('query');
    return c.json(await searchEngines(ctx, { pageId: query.page_id, limit: query.limit, name: query.name }), 200);
  });
};
