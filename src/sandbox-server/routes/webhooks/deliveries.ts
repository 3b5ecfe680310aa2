import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import {
  DeliveryParamsSchema,
  SearchDeliveriesQuerySchema,
  WebhookDeliveryPageSchema,
  WebhookDeliverySchema,
  WebhookIdParamsSchema,
} from '../../models/webhook.js';
import { redeliver, searchDeliveries } from '../../services/webhooks/deliveries.js';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { WebhookContext } from '../../services/webhooks/webhooks.js';

const search = createRoute({
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

const resend = createRoute({
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

export const registerWebhookDeliveries = (app: OpenAPIHono, ctx: WebhookContext): void => {
  app.openapi(search, async (c) => {
    const query = c.req.valid('query');
    const pageId = query.page_id === undefined ? undefined : Number(query.page_id);
    return c.json(await searchDeliveries(ctx.db, c.req.valid('param').id, { pageId, limit: query.limit, state: query.state }), 200);
  });
  app.openapi(resend, async (c) => {
    const { id, delivery_id } = c.req.valid('param');
    return c.json(await redeliver(ctx.db, id, Number(delivery_id)), 202);
  });
};
