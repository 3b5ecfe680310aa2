import type { RouteRegistrar } from '../types.js';
import { registerWebhookCrud } from './crud.js';
import { registerWebhookDeliveries } from './deliveries.js';

export const registerWebhookRoutes: RouteRegistrar = (app, ctx) => {
  registerWebhookCrud(app, ctx);
  registerWebhookDeliveries(app, ctx);
};
