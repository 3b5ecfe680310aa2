import { createRoute, z } from '@hono/zod-openapi';
import { countAppConversations } from '../../services/app-conversations/count-app-conversations.js';
import { getAppConversations } from '../../services/app-conversations/get-app-conversations.js';
import { searchAppConversations } from '../../services/app-conversations/search-app-conversations.js';
import {
  AppConversationFilterSchema,
  AppConversationPageSchema,
  AppConversationSchema,
  SearchAppConversationsQuerySchema,
} from '../../models/app-conversation.js';
import { BatchIdsPluralQuerySchema, errorResponses } from '../../models/common.js';
import type { AppConversationRouteRegistrar } from './deps.js';

const search = createRoute({
  method: 'get',
  path: '/api/v1/app-conversations/search',
  tags: ['App conversations'],
  summary: 'Search app conversations',
  request: { query: SearchAppConversationsQuerySchema },
  responses: {
    200: { description: 'A page of app conversations', content: { 'application/json': { schema: AppConversationPageSchema } } },
    ...errorResponses(401),
  },
});

const count = createRoute({
  method: 'get',
  path: '/api/v1/app-conversations/count',
  tags: ['App conversations'],
  summary: 'Count app conversations matching the search filters',
  request: { query: AppConversationFilterSchema },
  responses: {
    200: { description: 'How many match', content: { 'application/json': { schema: z.number().int() } } },
    ...errorResponses(401),
  },
});

const batchGet = createRoute({
  method: 'get',
  path: '/api/v1/app-conversations',
  tags: ['App conversations'],
  summary: 'Get app conversations by id (null for each unknown id)',
  request: { query: BatchIdsPluralQuerySchema },
  responses: {
    200: {
      description: 'One entry per id, in order',
      content: { 'application/json': { schema: z.array(AppConversationSchema.nullable()) } },
    },
    ...errorResponses(400, 401),
  },
});

export const registerSearchAppConversations: AppConversationRouteRegistrar = (app, { ctx }) => {
  app.openapi(search, async (c) => {
    const { sort_order, page_id, ...rest } = c.req.valid('query');
    return c.json(await searchAppConversations(ctx, { ...rest, sortOrder: sort_order, pageId: page_id }), 200);
  });
  app.openapi(count, async (c) => c.json(await countAppConversations(ctx, c.req.valid('query')), 200));
  app.openapi(batchGet, async (c) => c.json(await getAppConversations(ctx, c.req.valid('query').ids), 200));
};
