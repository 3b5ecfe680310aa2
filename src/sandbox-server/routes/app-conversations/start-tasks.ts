import { createRoute, z } from '@hono/zod-openapi';
import {
  AppConversationStartTaskPageSchema,
  AppConversationStartTaskSchema,
  SearchStartTasksQuerySchema,
  StartTaskFilterSchema,
} from '../../models/app-conversation.js';
import { countStartTasks } from '../../services/app-conversations/count-start-tasks.js';
import { getStartTasks } from '../../services/app-conversations/get-start-tasks.js';
import { searchStartTasks } from '../../services/app-conversations/search-start-tasks.js';
import { BatchIdsPluralQuerySchema, errorResponses } from '../../models/common.js';
import type { AppConversationRouteRegistrar } from './deps.js';

const search = createRoute({
  method: 'get',
  path: '/api/v1/app-conversations/start-tasks/search',
  tags: ['App conversations'],
  summary: 'Search start tasks, newest first',
  request: { query: SearchStartTasksQuerySchema },
  responses: {
    200: { description: 'A page of start tasks', content: { 'application/json': { schema: AppConversationStartTaskPageSchema } } },
    ...errorResponses(401),
  },
});

const count = createRoute({
  method: 'get',
  path: '/api/v1/app-conversations/start-tasks/count',
  tags: ['App conversations'],
  summary: 'Count start tasks',
  request: { query: StartTaskFilterSchema },
  responses: {
    200: { description: 'How many match', content: { 'application/json': { schema: z.number().int() } } },
    ...errorResponses(401),
  },
});

const batchGet = createRoute({
  method: 'get',
  path: '/api/v1/app-conversations/start-tasks',
  tags: ['App conversations'],
  summary: 'Get start tasks by id (null for each unknown id)',
  request: { query: BatchIdsPluralQuerySchema },
  responses: {
    200: {
      description: 'One entry per id, in order',
      content: { 'application/json': { schema: z.array(AppConversationStartTaskSchema.nullable()) } },
    },
    ...errorResponses(400, 401),
  },
});

export const registerStartTaskRoutes: AppConversationRouteRegistrar = (app, { ctx }) => {
  app.openapi(search, async (c) => {
    const { page_id, ...rest } = c.req.valid('query');
    return c.json(await searchStartTasks(ctx, { ...rest, pageId: page_id }), 200);
  });
  app.openapi(count, async (c) => c.json(await countStartTasks(ctx, c.req.valid('query')), 200));
  app.openapi(batchGet, async (c) => c.json(await getStartTasks(ctx, c.req.valid('query').ids), 200));
};
