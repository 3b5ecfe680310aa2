import { asc } from 'drizzle-orm';
import { webhooks } from '../../db/schema.js';
import type { Webhook } from '../../models/webhook.js';
import type { WebhookContext } from './context.js';
import { toWebhook } from './webhook-view.js';

/** Every webhook, oldest first. */
export async function listWebhooks(ctx: WebhookContext): Promise<Webhook[]> {
  return (await ctx.db.select().from(webhooks).orderBy(asc(webhooks.createdAt), asc(webhooks.id))).map(toWebhook);
}
