import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { SearchDeliveriesQuerySchema, WebhookDeliveryPageSchema, WebhookIdParamsSchema } from '../../models/webhook.js';
import { searchWebhookDeliveries } from '../../services/webhooks/search-webhook-deliveries.js';
import type { WebhookRouteRegistrar } from './types.js';

const route = createRoute({
  method: 'get',
  path: '/api/v1/webhooks/{id}/deliveries',
  tags: ['Webhooks'],
  summary: "The webhook's delivery log, newest first: state, attempts, last status, latency and error",
  request: { params: WebhookIdParamsSchema, query: SearchDeliveriesQuerySchema },
  responses: {
    200: { description: 'A page of deliveries', content: { 'application/json': { schema: WebhookDeliveryPageSchema } } },
    ...errorResponses(401, 404),
  },
});

export const registerSearchWebhookDeliveries: WebhookRouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    const query = c.req.valid('query');
    const pageId = query.page_id === undefined ? undefined : Number(query.page_id);
    return c.json(await searchWebhookDeliveries(ctx, { webhookId: c.req.valid('param').id, pageId, limit: query.limit, state: query.state }), 200);
  });
};
