import { randomBytes, randomUUID } from 'node:crypto';
import { asc, eq } from 'drizzle-orm';
import type { LifecycleEventType } from '../../../contracts/lifecycle-event.js';
import { NotFoundError } from '../../../errors/index.js';
import type { Database } from '../../db/client.js';
import { type WebhookRow, webhooks } from '../../db/schema.js';
import type { Webhook } from '../../models/webhook.js';
import { toWebhook } from './webhook-view.js';

export interface CreateWebhookInput {
  url: string;
  event_types: LifecycleEventType[];
  enabled: boolean;
}

/** Standard Webhooks' secret format: `whsec_` and 32 random bytes in base64, the HMAC key. */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Registers a webhook; the answer is the only one that carries its secret. */
export async function createWebhook(db: Database, input: CreateWebhookInput): Promise<Webhook & { secret: string }> {
  const now = new Date();
  const [row] = await db
    .insert(webhooks)
    .values({ id: randomUUID(), url: input.url, eventTypes: input.event_types, enabled: input.enabled, secret: newSecret(), createdAt: now, updatedAt: now })
    .returning();
  if (!row) throw new Error('insert returned no row');
  return { ...toWebhook(row), secret: row.secret };
}

export async function listWebhooks(db: Database): Promise<Webhook[]> {
  return (await db.select().from(webhooks).orderBy(asc(webhooks.createdAt), asc(webhooks.id))).map(toWebhook);
}

export async function requireWebhook(db: Database, id: string): Promise<WebhookRow> {
  const [row] = await db.select().from(webhooks).where(eq(webhooks.id, id));
  if (!row) throw new NotFoundError('Webhook not found');
  return row;
}

export async function getWebhook(db: Database, id: string): Promise<Webhook> {
  return toWebhook(await requireWebhook(db, id));
}

export interface UpdateWebhookInput {
  url?: string;
  event_types?: LifecycleEventType[];
  enabled?: boolean;
}

/** Changes what is given. Enabling clears the reason it was disabled and the failure clock. */
export async function updateWebhook(db: Database, id: string, input: UpdateWebhookInput): Promise<Webhook> {
  const [row] = await db
    .update(webhooks)
    .set({
      ...(input.url === undefined ? {} : { url: input.url }),
      ...(input.event_types === undefined ? {} : { eventTypes: input.event_types }),
      ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
      ...(input.enabled === true ? { disabledReason: null, failingSince: null } : {}),
      updatedAt: new Date(),
    })
    .where(eq(webhooks.id, id))
    .returning();
  if (!row) throw new NotFoundError('Webhook not found');
  return toWebhook(row);
}

/** Removes the webhook and its delivery log (the foreign key cascades). */
export async function deleteWebhook(db: Database, id: string): Promise<void> {
  const deleted = await db.delete(webhooks).where(eq(webhooks.id, id)).returning({ id: webhooks.id });
  if (deleted.length === 0) throw new NotFoundError('Webhook not found');
}
