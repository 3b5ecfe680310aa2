import { followEvents, latestEventId } from '../../lifecycle-events/follow-events.js';
import type { EventFilter } from '../../lifecycle-events/event-view.js';
import type { LifecycleEvent } from '../../models/lifecycle-event.js';
import type { LifecycleEventContext } from './context.js';

export interface FollowLifecycleEventsInput extends EventFilter {
  /** The id an EventSource sends back when it reconnects (`Last-Event-ID`); wins over `afterEventId`. */
  lastEventId?: string;
  afterEventId?: string;
  /** Aborts when the client leaves. */
  signal: AbortSignal;
}

/**
 * The events matching the filter after the id the client names, else after the newest event
 * (taken now, before the caller answers), then each new one as it commits, until the client
 * leaves or the server shuts down.
 */
export async function followLifecycleEvents(ctx: LifecycleEventContext, input: FollowLifecycleEventsInput): Promise<AsyncIterable<LifecycleEvent>> {
  const named = input.lastEventId ?? input.afterEventId;
  const afterId = named === undefined ? await latestEventId(ctx.db) : Number(named);
  return followEvents({
    db: ctx.db,
    feed: ctx.feed,
    filter: { types: input.types, sandboxId: input.sandboxId },
    afterId,
    signal: AbortSignal.any([input.signal, ctx.feed.closing]),
  });
}
