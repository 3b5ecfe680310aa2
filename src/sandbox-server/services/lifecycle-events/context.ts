import type { EventFeed } from '../../lifecycle-events/event-feed.js';
import type { EventTail } from '../../lifecycle-events/event-tail.js';
import type { StreamLimit } from '../../lifecycle-events/stream-limit.js';
import type { ServiceContext } from '../context.js';

export interface LifecycleEventContext extends ServiceContext {
  /** Wakes followers when events commit; `closing` aborts when the server shuts down. */
  feed: EventFeed;
  /** The one reader of new events that every follower takes them from. */
  tail: EventTail;
  /** Streams open per API key. */
  streams: StreamLimit;
}
