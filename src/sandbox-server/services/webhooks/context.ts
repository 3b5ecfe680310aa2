import type { Database } from '../../db/client.js';
import type { WebhookTargets } from '../../webhooks/targets.js';

/** What the webhook verbs need: the database, and where webhooks may send. */
export interface WebhookContext {
  db: Database;
  webhookTargets: WebhookTargets;
}
