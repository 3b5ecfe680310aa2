import { createRoute } from '@hono/zod-openapi';
import { errorResponses, SuccessSchema } from '../../models/common.js';
import { WebhookIdParamsSchema } from '../../models/webhook.js';
import { deleteWebhook } from '../../services/webhooks/delete-webhook.js';
import type { WebhookRouteRegistrar } from './types.js';

const route = createRoute({
  method: 'delete',
  path: '/api/v1/webhooks/{id}',
  tags: ['Webhooks'],
  summary: 'Remove a webhook and its delivery log',
  request: { params: WebhookIdParamsSchema },
  responses: {
    200: { description: 'Removed', content: { 'application/json': { schema: SuccessSchema } } },
    ...errorResponses(401, 404),
  },
});

export const registerDeleteWebhook: WebhookRouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    await deleteWebhook(ctx, c.req.valid('param').id);
    return c.json({ success: true as const }, 200);
  });
};
