import { z } from '@hono/zod-openapi';
import { DELIVERY_STATES } from '../../contracts/webhook.js';
import { LimitQuerySchema, pageSchema } from '../../contracts/paging.js';
import { EventIdSchema, IdTextSchema, LifecycleEventTypeSchema } from './lifecycle-event.js';

/** Only http and https, checked when registered: the dispatcher sends nothing else. */
export const WebhookUrlSchema = z
  .string()
  .max(2048)
  .check((ctx) => {
    let url: URL | undefined;
    try {
      url = new URL(ctx.value);
    } catch {
      url = undefined;
    }
    if (/[\u0000-\u001f]/.test(ctx.value)) {
      ctx.issues.push({ code: 'invalid_format', format: 'url', input: ctx.value, message: 'must not contain control characters' });
    } else if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      ctx.issues.push({ code: 'invalid_format', format: 'url', input: ctx.value, message: 'must be an http:// or https:// URL' });
    } else if (url.username !== '' || url.password !== '') {
      // They would be sent, and shown in every listing: the signature is how a receiver trusts us.
      ctx.issues.push({ code: 'invalid_format', format: 'url', input: ctx.value, message: 'must not carry a user name or password' });
    }
  })
  .openapi({ format: 'uri', example: 'https://ops.example.com/hooks/sandboxes' });

export const WebhookSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    /** Empty: every type. */
    event_types: z.array(LifecycleEventTypeSchema),
    enabled: z.boolean(),
    /** Set when the server disabled it (deliveries failing for a day); PATCH enabled=true clears it. */
    disabled_reason: z.string().nullable(),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Webhook');
export type Webhook = z.infer<typeof WebhookSchema>;

export const CreatedWebhookSchema = WebhookSchema.extend({
  /** Signs every delivery (see the README); shown only in this answer. */
  secret: z.string(),
}).openapi('CreatedWebhook');

export const CreateWebhookRequestSchema = z
  .object({
    url: WebhookUrlSchema,
    event_types: z.array(LifecycleEventTypeSchema).max(100).default([]),
    enabled: z.boolean().default(true),
  })
  .strict()
  .openapi('CreateWebhookRequest');

export const UpdateWebhookRequestSchema = z
  .object({
    url: WebhookUrlSchema.optional(),
    event_types: z.array(LifecycleEventTypeSchema).max(100).optional(),
    enabled: z.boolean().optional(),
  })
  .strict()
  .openapi('UpdateWebhookRequest');

export const WebhookIdParamsSchema = z.object({ id: IdTextSchema });
export const DeliveryParamsSchema = z.object({ id: IdTextSchema, delivery_id: EventIdSchema });

export const WebhookDeliverySchema = z
  .object({
    id: z.string(),
    webhook_id: z.string(),
    event_id: z.string(),
    event_type: LifecycleEventTypeSchema,
    state: z.enum(DELIVERY_STATES),
    attempts: z.number().int(),
    /** Of the last attempt: the receiver's HTTP status, how long it took, what went wrong. */
    status_code: z.number().int().nullable(),
    latency_ms: z.number().int().nullable(),
    error: z.string().nullable(),
    next_attempt_at: z.string().nullable().openapi({ format: 'date-time' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    delivered_at: z.string().nullable().openapi({ format: 'date-time' }),
  })
  .openapi('WebhookDelivery');
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

export const WebhookDeliveryPageSchema = pageSchema(WebhookDeliverySchema).openapi('WebhookDeliveryPage');

export const SearchDeliveriesQuerySchema = z.object({
  page_id: EventIdSchema.optional(),
  limit: LimitQuerySchema,
  state: z.enum(DELIVERY_STATES).optional(),
});
