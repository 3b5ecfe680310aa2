import { randomBytes, randomUUID } from 'node:crypto';
import { asc, eq } from 'drizzle-orm';
import type { LifecycleEventType } from '../../../contracts/lifecycle-event.js';
import { ForbiddenError, NotFoundError, validationError } from '../../../errors/index.js';
import type { Database } from '../../db/client.js';
import { type WebhookRow, webhooks } from '../../db/schema.js';
import type { Webhook } from '../../models/webhook.js';
import type { WebhookTargets } from '../../webhooks/targets.js';
import { toWebhook } from './webhook-view.js';

/** What the webhook verbs need: the database, and where webhooks may send. */
export interface WebhookContext {
  db: Database;
  webhookTargets: WebhookTargets;
}

/**
 * Refuses a target that is not public unless WEBHOOK_ALLOWED_HOSTS names it (422), and then unless
 * an admin key asks (403). The dispatcher judges again at every attempt, since names resolve anew.
 */
async function checkTarget(ctx: WebhookContext, url: string, admin: boolean): Promise<void> {
  const verdict = await ctx.webhookTargets.judge(new URL(url));
  if (!verdict.allowed) throw validationError('body', ['url'], verdict.reason);
  if (verdict.private && !admin) throw new ForbiddenError('A webhook to a non-public address needs an admin key (SANDBOX_SERVER_ADMIN_KEYS)');
}

export interface CreateWebhookInput {
  url: string;
  event_types: LifecycleEventType[];
  enabled: boolean;
  /** Whether an admin key asks: only it may name a non-public target. */
  admin: boolean;
}

/** Standard Webhooks' secret format: `whsec_` and 32 random bytes in base64, the HMAC key. */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Registers a webhook; the answer is the only one that carries its secret. */
export async function createWebhook(ctx: WebhookContext, input: CreateWebhookInput): Promise<Webhook & { secret: string }> {
  await checkTarget(ctx, input.url, input.admin);
  const now = new Date();
  const [row] = await ctx.db
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
  admin: boolean;
}

/** Changes what is given. Enabling clears the reason it was disabled and the failure clock. */
export async function updateWebhook(ctx: WebhookContext, id: string, input: UpdateWebhookInput): Promise<Webhook> {
  await requireWebhook(ctx.db, id);
  if (input.url !== undefined) await checkTarget(ctx, input.url, input.admin);
  const [row] = await ctx.db
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
