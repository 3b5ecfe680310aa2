import { eq } from 'drizzle-orm';
import type { LifecycleEventType } from '../../../contracts/lifecycle-event.js';
import { NotFoundError } from '../../../errors/index.js';
import { webhooks } from '../../db/schema.js';
import type { Webhook } from '../../models/webhook.js';
import { checkWebhookTarget } from './check-webhook-target.js';
import type { WebhookContext } from './context.js';
import { requireWebhook } from './find-webhook.js';
import { toWebhook } from './webhook-view.js';

export interface UpdateWebhookInput {
  id: string;
  url?: string;
  event_types?: LifecycleEventType[];
  enabled?: boolean;
  /** Whether an admin key asks: only it may name a non-public target. */
  admin: boolean;
}

/** Changes what is given. Enabling clears the reason it was disabled and the failure clock. */
export async function updateWebhook(ctx: WebhookContext, input: UpdateWebhookInput): Promise<Webhook> {
  await requireWebhook(ctx, input.id);
  if (input.url !== undefined) await checkWebhookTarget(ctx, input.url, input.admin);
  const [row] = await ctx.db
    .update(webhooks)
    .set({
      ...(input.url === undefined ? {} : { url: input.url }),
      ...(input.event_types === undefined ? {} : { eventTypes: input.event_types }),
      ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
      ...(input.enabled === true ? { disabledReason: null, failingSince: null } : {}),
      updatedAt: new Date(),
    })
    .where(eq(webhooks.id, input.id))
    .returning();
  if (!row) throw new NotFoundError('Webhook not found');
  return toWebhook(row);
}
