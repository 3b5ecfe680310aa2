import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { WebhookIdParamsSchema, WebhookSchema } from '../../models/webhook.js';
import { getWebhook } from '../../services/webhooks/get-webhook.js';
import type { WebhookRouteRegistrar } from './types.js';

const route = createRoute({
  method: 'get',
  path: '/api/v1/webhooks/{id}',
  tags: ['Webhooks'],
  summary: 'Get a webhook',
  request: { params: WebhookIdParamsSchema },
  responses: {
    200: { description: 'The webhook', content: { 'application/json': { schema: WebhookSchema } } },
    ...errorResponses(401, 404),
  },
});

export const registerGetWebhook: WebhookRouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => c.json(await getWebhook(ctx, c.req.valid('param').id), 200));
};
