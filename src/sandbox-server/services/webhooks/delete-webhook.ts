import { eq } from 'drizzle-orm';
import { NotFoundError } from '../../../errors/index.js';
import { webhooks } from '../../db/schema.js';
import type { WebhookContext } from './context.js';

/** Removes the webhook and its delivery log (the foreign key cascades). */
export async function deleteWebhook(ctx: WebhookContext, id: string): Promise<void> {
  const deleted = await ctx.db.delete(webhooks).where(eq(webhooks.id, id)).returning({ id: webhooks.id });
  if (deleted.length === 0) throw new NotFoundError('Webhook not found');
}
