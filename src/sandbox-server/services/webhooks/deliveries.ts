import { and, desc, eq, lte, sql } from 'drizzle-orm';
import type { DeliveryState } from '../../../contracts/webhook.js';
import { NotFoundError } from '../../../errors/index.js';
import type { Page } from '../../../contracts/paging.js';
import type { Database } from '../../db/client.js';
import { webhookDeliveries } from '../../db/schema.js';
import { LIFECYCLE_EVENTS_CHANNEL } from '../../lifecycle-events/record-event.js';
import type { WebhookDelivery } from '../../models/webhook.js';
import { toWebhookDelivery } from './webhook-view.js';
import { requireWebhook } from './webhooks.js';

/** A webhook's delivery log, newest first; the id is the sort key, so the cursor needs no lookup. */
export async function searchDeliveries(
  db: Database,
  webhookId: string,
  input: { pageId?: number; limit: number; state?: DeliveryState },
): Promise<Page<WebhookDelivery>> {
  await requireWebhook(db, webhookId);
  const conditions = [eq(webhookDeliveries.webhookId, webhookId)];
  if (input.state) conditions.push(eq(webhookDeliveries.state, input.state));
  if (input.pageId !== undefined) conditions.push(lte(webhookDeliveries.id, input.pageId));
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(and(...conditions))
    .orderBy(desc(webhookDeliveries.id))
    .limit(input.limit + 1);
  const next = rows.length > input.limit ? rows[input.limit] : undefined;
  return { items: rows.slice(0, input.limit).map(toWebhookDelivery), next_page_id: next ? String(next.id) : null };
}

/**
 * Sends a delivery's event again as a new delivery (same body, same webhook-id header, so a
 * receiver that deduplicates sees a repeat), queued behind the sandbox's pending ones.
 */
export async function redeliver(db: Database, webhookId: string, deliveryId: number): Promise<WebhookDelivery> {
  await requireWebhook(db, webhookId);
  const [original] = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId)));
  if (!original) throw new NotFoundError('Delivery not found');
  const [row] = await db
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
  await db.execute(sql`select pg_notify(${LIFECYCLE_EVENTS_CHANNEL}, '')`);
  return toWebhookDelivery(row);
}
