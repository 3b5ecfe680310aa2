import type { WebhookDeliveryRow, WebhookRow } from '../../db/schema.js';
import type { Webhook, WebhookDelivery } from '../../models/webhook.js';

/** A webhook as answered: never its secret. */
export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    event_types: row.eventTypes,
    enabled: row.enabled,
    disabled_reason: row.disabledReason,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function toWebhookDelivery(row: WebhookDeliveryRow): WebhookDelivery {
  return {
    id: String(row.id),
    webhook_id: row.webhookId,
    event_id: String(row.eventId),
    event_type: row.eventType,
    state: row.state,
    attempts: row.attempts,
    status_code: row.lastStatusCode,
    latency_ms: row.lastLatencyMs,
    error: row.lastError,
    next_attempt_at: row.state === 'pending' ? row.nextAttemptAt.toISOString() : null,
    created_at: row.createdAt.toISOString(),
    delivered_at: row.deliveredAt?.toISOString() ?? null,
  };
}
