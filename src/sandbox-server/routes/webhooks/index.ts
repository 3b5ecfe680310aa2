import type { OpenAPIHono } from '@hono/zod-openapi';
import type { WebhookContext } from '../../services/webhooks/webhooks.js';
import { registerWebhookCrud } from './crud.js';
import { registerWebhookDeliveries } from './deliveries.js';

export const registerWebhookRoutes = (app: OpenAPIHono, ctx: WebhookContext): void => {
  registerWebhookCrud(app, ctx);
  registerWebhookDeliveries(app, ctx);
};
