import { createHash, createHmac } from 'node:crypto';

/**
 * Deliveries are signed the Standard Webhooks way (standardwebhooks.com), so existing verifiers
 * work: `webhook-signature: v1,<base64 HMAC-SHA256>` over `<webhook-id>.<webhook-timestamp>.<body>`,
 * keyed with the base64 bytes after the secret's `whsec_` prefix.
 */
export function signDelivery(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * The `webhook-id` of an event sent to a webhook: the same for every attempt and redelivery (a
 * receiver deduplicates on it), and unique across installations, whose event ids all count from 1:
 * it is derived from the webhook's random id.
 */
export function messageId(webhookId: string, eventId: number): string {
  return `msg_${createHash('sha256').update(`${webhookId}/${eventId}`).digest('base64url').slice(0, 32)}`;
}

/** The headers of one attempt; the timestamp is the attempt's, in whole seconds. */
export function deliveryHeaders(secret: string, messageId: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'sandbox-server-webhooks/1',
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signDelivery(secret, messageId, timestamp, body),
  };
}
