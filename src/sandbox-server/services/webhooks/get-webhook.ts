import type { Webhook } from '../../models/webhook.js';
import type { WebhookContext } from './context.js';
import { requireWebhook } from './find-webhook.js';
import { toWebhook } from './webhook-view.js';

export async function getWebhook(ctx: WebhookContext, id: string): Promise<Webhook> {
  return toWebhook(await requireWebhook(ctx, id));
}
