import { and, desc, eq, lte } from 'drizzle-orm';
import type { Page } from '../../../contracts/paging.js';
import type { DeliveryState } from '../../../contracts/webhook.js';
import { webhookDeliveries } from '../../db/schema.js';
import type { WebhookDelivery } from '../../models/webhook.js';
import type { WebhookContext } from './context.js';
import { requireWebhook } from './find-webhook.js';
import { toWebhookDelivery } from './webhook-view.js';

/** A webhook's delivery log, newest first; the id is the sort key, so the cursor needs no lookup. */
export async function searchWebhookDeliveries(
  ctx: WebhookContext,
  input: { webhookId: string; pageId?: number; limit: number; state?: DeliveryState },
): Promise<Page<WebhookDelivery>> {
  await requireWebhook(ctx, input.webhookId);
  const conditions = [eq(webhookDeliveries.webhookId, input.webhookId)];
  if (input.state) conditions.push(eq(webhookDeliveries.state, input.state));
  if (input.pageId !== undefined) conditions.push(lte(webhookDeliveries.id, input.pageId));
  const rows = await ctx.db
    .select()
    .from(webhookDeliveries)
    .where(and(...conditions))
    .orderBy(desc(webhookDeliveries.id))
    .limit(input.limit + 1);
  const next = rows.length > input.limit ? rows[input.limit] : undefined;
  return { items: rows.slice(0, input.limit).map(toWebhookDelivery), next_page_id: next ? String(next.id) : null };
}
