import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { WebhookSchema } from '../../models/webhook.js';
import { listWebhooks } from '../../services/webhooks/list-webhooks.js';
import type { WebhookRouteRegistrar } from './types.js';

const route = createRoute({
  method: 'get',
  path: '/api/v1/webhooks',
  tags: ['Webhooks'],
  summary: 'List webhooks, oldest first',
  responses: {
    200: { description: 'Every webhook', content: { 'application/json': { schema: z.array(WebhookSchema) } } },
    ...errorResponses(401),
  },
});

export const registerListWebhooks: WebhookRouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => c.json(await listWebhooks(ctx), 200));
};
