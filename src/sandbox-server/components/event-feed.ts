import type { Logger } from '../../logger.js';
import type { SandboxServerConfig } from '../config.js';
import type { DatabaseHandle } from '../db/client.js';
import { EventFeed } from '../lifecycle-events/event-feed.js';
import { keepEventsFor } from '../lifecycle-events/retention.js';
import type { Component } from './component.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Expired events are removed at start and then this often. */
const RETENTION_SWEEP_MS = 60 * 60 * 1000;

/** The feed that wakes event streams and the webhook dispatcher at each commit of a lifecycle event. */
export function eventFeedComponent(database: DatabaseHandle): Component<EventFeed> {
  const events = new EventFeed();
  return {
    name: 'event feed',
    async start() {
      await events.listen(database.listen);
      return events;
    },
    stop: () => events.close(),
  };
}

/** Removes events older than EVENT_RETENTION_DAYS, at start and then hourly. */
export function eventRetentionComponent(config: SandboxServerConfig, database: DatabaseHandle, log: Logger): Component {
  let stopRetention: (() => void) | undefined;
  return {
    name: 'event retention',
    async start() {
      stopRetention = keepEventsFor({ db: database.db, retentionMs: config.EVENT_RETENTION_DAYS * DAY_MS, intervalMs: RETENTION_SWEEP_MS, log });
    },
    stop: async () => stopRetention?.(),
  };
}
