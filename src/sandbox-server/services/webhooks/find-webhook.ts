import { eq } from 'drizzle-orm';
import { NotFoundError } from '../../../errors/index.js';
import { type WebhookRow, webhooks } from '../../db/schema.js';
import type { WebhookContext } from './context.js';

export async function requireWebhook(ctx: WebhookContext, id: string): Promise<WebhookRow> {
  const [row] = await ctx.db.select().from(webhooks).where(eq(webhooks.id, id));
  if (!row) throw new NotFoundError('Webhook not found');
  return row;
}
