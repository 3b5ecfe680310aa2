import type { EventFeed } from '../../lifecycle-events/event-feed.js';
import type { ServiceContext } from '../context.js';

export interface LifecycleEventContext extends ServiceContext {
  /** Wakes followers when events commit; `closing` aborts when the server shuts down. */
  feed: EventFeed;
}
