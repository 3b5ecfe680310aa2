import type { EventFilterQuery, EventSearchQuery } from '../../contracts/agent-server/event-queries.js';
import { timestampMillis } from '../../events/index.js';
import type { EventFilter, EventQuery } from '../store/index.js';

export function eventFilterOf(query: EventFilterQuery): EventFilter {
  return {
    kind: query.kind,
    source: query.source,
    body: query.body,
    timestampGte: query.timestamp__gte === undefined ? undefined : timestampMillis(query.timestamp__gte),
    timestampLt: query.timestamp__lt === undefined ? undefined : timestampMillis(query.timestamp__lt),
  };
}

export function eventQueryOf(query: EventSearchQuery): EventQuery {
  return { ...eventFilterOf(query), sortOrder: query.sort_order, pageId: query.page_id, limit: query.limit };
}
