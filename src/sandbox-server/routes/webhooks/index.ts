import type { OpenAPIHono } from '@hono/zod-openapi';
import type { WebhookContext } from '../../services/webhooks/context.js';
import { registerCreateWebhook } from './create.js';
import { registerDeleteWebhook } from './delete.js';
import { registerGetWebhook } from './get.js';
import { registerListWebhooks } from './list.js';
import { registerRedeliverWebhookDelivery } from './redeliver.js';
import { registerSearchWebhookDeliveries } from './search-deliveries.js';
import { registerUpdateWebhook } from './update.js';

export const registerWebhookRoutes = (app: OpenAPIHono, ctx: WebhookContext): void => {
  for (const register of [
    registerCreateWebhook,
    registerListWebhooks,
    registerGetWebhook,
    registerUpdateWebhook,
    registerDeleteWebhook,
    registerSearchWebhookDeliveries,
    registerRedeliverWebhookDelivery,
  ]) {
    register(app, ctx);
  }
};
