import { createRoute } from '@hono/zod-openapi';
import { callerOf } from '../../auth.js';
import { errorResponses } from '../../models/common.js';
import { UpdateWebhookRequestSchema, WebhookIdParamsSchema, WebhookSchema } from '../../models/webhook.js';
import { updateWebhook } from '../../services/webhooks/update-webhook.js';
import type { WebhookRouteRegistrar } from './types.js';

const route = createRoute({
  method: 'patch',
  path: '/api/v1/webhooks/{id}',
  tags: ['Webhooks'],
  summary: 'Change a webhook; enabled=true also clears why it was disabled',
  request: {
    params: WebhookIdParamsSchema,
    body: { required: true, content: { 'application/json': { schema: UpdateWebhookRequestSchema } } },
  },
  responses: {
    200: { description: 'The webhook', content: { 'application/json': { schema: WebhookSchema } } },
    ...errorResponses(401, 403, 404),
  },
});

export const registerUpdateWebhook: WebhookRouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) =>
    c.json(await updateWebhook(ctx, { ...c.req.valid('json'), id: c.req.valid('param').id, admin: callerOf(c).role === 'admin' }), 200),
  );
};
