import type { EventFilterQuery, EventSearchQuery } from '../../../contracts/agent-server/event-queries.js';
import { timestampMillis } from '../../../events/index.js';
import type { EventFilter, EventQuery } from '../../store/index.js';

/**
 * OpenHands' Python server filters on the event's class path
 * (`openhands.sdk.event.llm_convertible.message.MessageEvent`); its last segment is our kind name.
 */
export function kindName(kind: string): string {
  return kind.slice(kind.lastIndexOf('.') + 1);
}

export function eventFilterOf(query: EventFilterQuery): EventFilter {
  return {
    kind: query.kind === undefined ? undefined : kindName(query.kind),
    source: query.source,
    body: query.body,
    timestampGte: query.timestamp__gte === undefined ? undefined : timestampMillis(query.timestamp__gte),
    timestampLt: query.timestamp__lt === undefined ? undefined : timestampMillis(query.timestamp__lt),
  };
}

export function eventQueryOf(query: EventSearchQuery): EventQuery {
  return { ...eventFilterOf(query), sortOrder: query.sort_order, pageId: query.page_id, limit: query.limit };
}
