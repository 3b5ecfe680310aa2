import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { LifecycleEventPageSchema, SearchEventsQuerySchema } from '../../models/lifecycle-event.js';
import { searchLifecycleEvents } from '../../services/lifecycle-events/search-lifecycle-events.js';
import type { EventRouteRegistrar } from './deps.js';

const route = createRoute({
  method: 'get',
  path: '/api/v1/events/search',
  tags: ['Events'],
  summary: 'Search lifecycle events, oldest first unless sort_order=TIMESTAMP_DESC',
  request: { query: SearchEventsQuerySchema },
  responses: {
    200: { description: 'A page of events', content: { 'application/json': { schema: LifecycleEventPageSchema } } },
    ...errorResponses(401),
  },
});

export const registerSearchEvents: EventRouteRegistrar = (app, deps) => {
  app.openapi(route, async (c) => {
    const query = c.req.valid('query');
    const page = await searchLifecycleEvents(deps.ctx, {
      types: query.type,
      sandboxId: query.sandbox_id,
      timestampGte: query.timestamp__gte === undefined ? undefined : new Date(query.timestamp__gte),
      timestampLt: query.timestamp__lt === undefined ? undefined : new Date(query.timestamp__lt),
      pageId: query.page_id === undefined ? undefined : Number(query.page_id),
      limit: query.limit,
      descending: query.sort_order === 'TIMESTAMP_DESC',
    });
    return c.json(page, 200);
  });
};
