import { and, eq, sql } from 'drizzle-orm';
import { NotFoundError } from '../../../errors/index.js';
import { webhookDeliveries } from '../../db/schema.js';
import { LIFECYCLE_EVENTS_CHANNEL } from '../../lifecycle-events/record-event.js';
import type { WebhookDelivery } from '../../models/webhook.js';
import type { WebhookContext } from './context.js';
import { requireWebhook } from './find-webhook.js';
import { toWebhookDelivery } from './webhook-view.js';

/**
 * Sends a delivery's event again as a new delivery (same body, same webhook-id header, so a
 * receiver that deduplicates sees a repeat), queued behind the sandbox's pending ones.
 */
export async function redeliverWebhookDelivery(ctx: WebhookContext, input: { webhookId: string; deliveryId: number }): Promise<WebhookDelivery> {
  const { webhookId } = input;
  await requireWebhook(ctx, webhookId);
  const [original] = await ctx.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, input.deliveryId), eq(webhookDeliveries.webhookId, webhookId)));
  if (!original) throw new NotFoundError('Delivery not found');
  const [row] = await ctx.db
    .insert(webhookDeliveries)
    .values({
      webhookId,
      eventId: original.eventId,
      eventType: original.eventType,
      orderingKey: original.orderingKey,
      body: original.body,
    })
    .returning();
  if (!row) throw new Error('insert returned no row');
  // Wakes the dispatchers, which listen where events are announced.
  await ctx.db.execute(sql`select pg_notify(${LIFECYCLE_EVENTS_CHANNEL}, '')`);
  return toWebhookDelivery(row);
}
