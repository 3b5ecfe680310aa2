import { createRoute, z } from '@hono/zod-openapi';
import { deleteAppConversation } from '../../services/app-conversations/delete-app-conversation.js';
import { getAppConversation } from '../../services/app-conversations/get-app-conversations.js';
import { updateAppConversation } from '../../services/app-conversations/update-app-conversation.js';
import { AppConversationSchema, UpdateAppConversationRequestSchema } from '../../models/app-conversation.js';
import { errorResponses, SuccessSchema } from '../../models/common.js';
import type { AppConversationRouteRegistrar } from './deps.js';

export const AppConversationIdParamsSchema = z.object({ id: z.uuid() });

const get = createRoute({
  method: 'get',
  path: '/api/v1/app-conversations/{id}',
  tags: ['App conversations'],
  summary: 'Get an app conversation',
  request: { params: AppConversationIdParamsSchema },
  responses: {
    200: { description: 'The app conversation', content: { 'application/json': { schema: AppConversationSchema } } },
    ...errorResponses(401, 404),
  },
});

const patch = createRoute({
  method: 'patch',
  path: '/api/v1/app-conversations/{id}',
  tags: ['App conversations'],
  summary: 'Change the title or tags of an app conversation',
  request: {
    params: AppConversationIdParamsSchema,
    body: { content: { 'application/json': { schema: UpdateAppConversationRequestSchema } } },
  },
  responses: {
    200: { description: 'The updated app conversation', content: { 'application/json': { schema: AppConversationSchema } } },
    ...errorResponses(401, 404),
  },
});

const remove = createRoute({
  method: 'delete',
  path: '/api/v1/app-conversations/{id}',
  tags: ['App conversations'],
  summary: 'Delete an app conversation (and its events on a running sandbox)',
  request: { params: AppConversationIdParamsSchema },
  responses: {
    200: { description: 'Deleted', content: { 'application/json': { schema: SuccessSchema } } },
    ...errorResponses(401, 404),
  },
});

export const registerAppConversationItemRoutes: AppConversationRouteRegistrar = (app, { ctx }) => {
  app.openapi(get, async (c) => c.json(await getAppConversation(ctx, c.req.valid('param').id), 200));
  app.openapi(patch, async (c) => c.json(await updateAppConversation(ctx, c.req.valid('param').id, c.req.valid('json')), 200));
  app.openapi(remove, async (c) => {
    await deleteAppConversation(ctx, c.req.valid('param').id);
    return c.json({ success: true as const }, 200);
  });
};
