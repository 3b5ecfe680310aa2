import { createRoute } from '@hono/zod-openapi';
import { callerOf } from '../../auth.js';
import { errorResponses } from '../../models/common.js';
import { CreatedWebhookSchema, CreateWebhookRequestSchema } from '../../models/webhook.js';
import { createWebhook } from '../../services/webhooks/create-webhook.js';
import type { WebhookRouteRegistrar } from './types.js';

const route = createRoute({
  method: 'post',
  path: '/api/v1/webhooks',
  tags: ['Webhooks'],
  summary: 'Register a webhook; the answer carries its signing secret, shown only this once',
  description:
    'The URL must resolve to public addresses only (422 otherwise), unless WEBHOOK_ALLOWED_HOSTS names its host; ' +
    'such a webhook needs an admin key (403 for others).',
  request: { body: { required: true, content: { 'application/json': { schema: CreateWebhookRequestSchema } } } },
  responses: {
    201: { description: 'The new webhook and its secret', content: { 'application/json': { schema: CreatedWebhookSchema } } },
    ...errorResponses(401, 403),
  },
});

export const registerCreateWebhook: WebhookRouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => c.json(await createWebhook(ctx, { ...c.req.valid('json'), admin: callerOf(c).role === 'admin' }), 201));
};
