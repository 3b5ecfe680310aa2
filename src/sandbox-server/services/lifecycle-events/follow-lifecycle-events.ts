import { latestEventId } from '../../lifecycle-events/event-tail.js';
import { followEvents } from '../../lifecycle-events/follow-events.js';
import type { EventFilter } from '../../lifecycle-events/event-view.js';
import type { LifecycleEvent } from '../../models/lifecycle-event.js';
import type { LifecycleEventContext } from './context.js';

export interface FollowLifecycleEventsInput extends EventFilter {
  /** The id an EventSource sends back when it reconnects (`Last-Event-ID`); wins over `afterEventId`. */
  lastEventId?: string;
  afterEventId?: string;
  /** Aborts when the client leaves. */
  signal: AbortSignal;
  /** The caller's key (auth.ts Caller.keyId): each key may have MAX_EVENT_STREAMS_PER_KEY streams open. */
  keyId: string;
}

/**
 * The events matching the filter after the id the client names, else after the newest event
 * (taken now, before the caller answers), then each new one as it commits, until the client
 * leaves or the server shuts down. A key with MAX_EVENT_STREAMS_PER_KEY streams open gets a 429.
 */
export async function followLifecycleEvents(ctx: LifecycleEventContext, input: FollowLifecycleEventsInput): Promise<AsyncIterable<LifecycleEvent>> {
  const giveBack = ctx.streams.take(input.keyId);
  try {
    const named = input.lastEventId ?? input.afterEventId;
    // Without a cursor, after everything committed so far, as the database or the tail has seen it.
    const afterId = named === undefined ? Math.max(await latestEventId(ctx.db), ctx.tail.covered() ?? 0) : Number(named);
    const signal = AbortSignal.any([input.signal, ctx.feed.closing]);
    // The stream is given back when the client leaves, and when the events end.
    signal.addEventListener('abort', giveBack, { once: true });
    const events = followEvents({ db: ctx.db, feed: ctx.feed, tail: ctx.tail, filter: { types: input.types, sandboxId: input.sandboxId }, afterId, signal });
    return (async function* () {
      try {
        yield* events;
      } finally {
        giveBack();
      }
    })();
  } catch (error) {
    giveBack();
    throw error;
  }
}
