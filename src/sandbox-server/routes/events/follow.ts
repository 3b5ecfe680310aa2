import type { z } from 'zod';
import { followEvents } from '../../lifecycle-events/follow-events.js';
import type { StreamEventsQuerySchema } from '../../models/lifecycle-event.js';
import type { EventRouteDeps } from './deps.js';

/**
 * The events the stream and the socket send: those matching the query after `afterId`, until the
 * client leaves (`signal`) or the server shuts down.
 */
export function followQuery(deps: EventRouteDeps, query: z.output<typeof StreamEventsQuerySchema>, afterId: number, signal: AbortSignal) {
  return followEvents({
    db: deps.db,
    feed: deps.feed,
    filter: { types: query.type, sandboxId: query.sandbox_id },
    afterId,
    signal: AbortSignal.any([signal, deps.feed.closing]),
  });
}
