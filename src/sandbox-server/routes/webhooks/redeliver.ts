import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { DeliveryParamsSchema, WebhookDeliverySchema } from '../../models/webhook.js';
import { redeliverWebhookDelivery } from '../../services/webhooks/redeliver-webhook-delivery.js';
import type { WebhookRouteRegistrar } from './types.js';

const route = createRoute({
  method: 'post',
  path: '/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver',
  tags: ['Webhooks'],
  summary: "Send a delivery's event again, as a new delivery",
  request: { params: DeliveryParamsSchema },
  responses: {
    202: { description: 'The new delivery, pending', content: { 'application/json': { schema: WebhookDeliverySchema } } },
    ...errorResponses(401, 404),
  },
});

export const registerRedeliverWebhookDelivery: WebhookRouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    const { id, delivery_id } = c.req.valid('param');
    return c.json(await redeliverWebhookDelivery(ctx, { webhookId: id, deliveryId: Number(delivery_id) }), 202);
  });
};
