import type { Logger } from '../../logger.js';
import type { SandboxServerConfig } from '../config.js';
import type { DatabaseHandle } from '../db/client.js';
import type { EventFeed } from '../lifecycle-events/event-feed.js';
import { WebhookDispatcher } from '../webhooks/dispatcher.js';
import { createWebhookTargets, type WebhookTargets } from '../webhooks/targets.js';
import type { Component } from './component.js';

/** Delivers lifecycle events to the subscribed webhooks; returns the targets' rules, which the API checks subscriptions by. */
export function webhooksComponent(config: SandboxServerConfig, database: DatabaseHandle, events: EventFeed, log: Logger): Component<WebhookTargets> {
  const targets = createWebhookTargets({ allowedHosts: config.WEBHOOK_ALLOWED_HOSTS });
  const webhooks = new WebhookDispatcher({
    targets,
    db: database.db,
    feed: events,
    log,
    timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
    retry: { firstRetryMs: config.WEBHOOK_FIRST_RETRY_SECONDS * 1000 },
  });
  return {
    name: 'webhooks',
    async start() {
      webhooks.start();
      return targets;
    },
    stop: () => webhooks.stop(),
  };
}
