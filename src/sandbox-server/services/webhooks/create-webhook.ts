import { randomBytes, randomUUID } from 'node:crypto';
import type { LifecycleEventType } from '../../../contracts/lifecycle-event.js';
import { webhooks } from '../../db/schema.js';
import type { Webhook } from '../../models/webhook.js';
import { checkWebhookTarget } from './check-webhook-target.js';
import type { WebhookContext } from './context.js';
import { toWebhook } from './webhook-view.js';

export interface CreateWebhookInput {
  url: string;
  event_types: LifecycleEventType[];
  enabled: boolean;
  /** Whether an admin key asks: only it may name a non-public target. */
  admin: boolean;
}

/** Registers a webhook; the answer is the only one that carries its secret. */
export async function createWebhook(ctx: WebhookContext, input: CreateWebhookInput): Promise<Webhook & { secret: string }> {
  await checkWebhookTarget(ctx, input.url, input.admin);
  const now = new Date();
  const [row] = await ctx.db
    .insert(webhooks)
    .values({ id: randomUUID(), url: input.url, eventTypes: input.event_types, enabled: input.enabled, secret: newSecret(), createdAt: now, updatedAt: now })
    .returning();
  if (!row) throw new Error('insert returned no row');
  return { ...toWebhook(row), secret: row.secret };
}

/** Standard Webhooks' secret format: `whsec_` and 32 random bytes in base64, the HMAC key. */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
