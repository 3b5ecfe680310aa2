import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { errorResponses, SuccessSchema } from '../../models/common.js';
import {
  CreatedWebhookSchema,
  CreateWebhookRequestSchema,
  UpdateWebhookRequestSchema,
  WebhookIdParamsSchema,
  WebhookSchema,
} from '../../models/webhook.js';
import type { Context } from 'hono';
import { callerOf } from '../../auth.js';
import { type WebhookContext, createWebhook, deleteWebhook, getWebhook, listWebhooks, updateWebhook } from '../../services/webhooks/webhooks.js';

const json = <T extends z.ZodType>(schema: T) => ({ content: { 'application/json': { schema } } });

const create = createRoute({
  method: 'post',
  path: '/api/v1/webhooks',
  tags: ['Webhooks'],
  summary: 'Register a webhook; the answer carries its signing secret, shown only this once',
  description:
    'The URL must resolve to public addresses only (422 otherwise), unless WEBHOOK_ALLOWED_HOSTS names its host; ' +
    'such a webhook needs an admin key (403 for others).',
  request: { body: { required: true, ...json(CreateWebhookRequestSchema) } },
  responses: { 201: { description: 'The new webhook and its secret', ...json(CreatedWebhookSchema) }, ...errorResponses(401, 403) },
});

const list = createRoute({
  method: 'get',
  path: '/api/v1/webhooks',
  tags: ['Webhooks'],
  summary: 'List webhooks, oldest first',
  responses: { 200: { description: 'Every webhook', ...json(z.array(WebhookSchema)) }, ...errorResponses(401) },
});

const get = createRoute({
  method: 'get',
  path: '/api/v1/webhooks/{id}',
  tags: ['Webhooks'],
  summary: 'Get a webhook',
  request: { params: WebhookIdParamsSchema },
  responses: { 200: { description: 'The webhook', ...json(WebhookSchema) }, ...errorResponses(401, 404) },
});

const update = createRoute({
  method: 'patch',
  path: '/api/v1/webhooks/{id}',
  tags: ['Webhooks'],
  summary: 'Change a webhook; enabled=true also clears why it was disabled',
  request: { params: WebhookIdParamsSchema, body: { required: true, ...json(UpdateWebhookRequestSchema) } },
  responses: { 200: { description: 'The webhook', ...json(WebhookSchema) }, ...errorResponses(401, 403, 404) },
});

const remove = createRoute({
  method: 'delete',
  path: '/api/v1/webhooks/{id}',
  tags: ['Webhooks'],
  summary: 'Remove a webhook and its delivery log',
  request: { params: WebhookIdParamsSchema },
  responses: { 200: { description: 'Removed', ...json(SuccessSchema) }, ...errorResponses(401, 404) },
});

export const registerWebhookCrud = (app: OpenAPIHono, ctx: WebhookContext): void => {
  const admin = (c: Context) => callerOf(c).role === 'admin';
  app.openapi(create, async (c) => c.json(await createWebhook(ctx, { ...c.req.valid('json'), admin: admin(c) }), 201));
  app.openapi(list, async (c) => c.json(await listWebhooks(ctx.db), 200));
  app.openapi(get, async (c) => c.json(await getWebhook(ctx.db, c.req.valid('param').id), 200));
  app.openapi(update, async (c) => c.json(await updateWebhook(ctx, c.req.valid('param').id, { ...c.req.valid('json'), admin: admin(c) }), 200));
  app.openapi(remove, async (c) => {
    await deleteWebhook(ctx.db, c.req.valid('param').id);
    return c.json({ success: true as const }, 200);
  });
};
