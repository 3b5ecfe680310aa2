import { isTimestamp, timestampMillis } from '../../events/index.js';
import type { EventLog } from '../store/index.js';
import { StreamCloseCode, type StreamClose } from './close-codes.js';

/** Where a subscriber's stream begins, as its query asks. */
export type StreamStart =
  | { from: 'now' }
  | { from: 'beginning' }
  | { from: 'after'; eventId: string }
  | { from: 'since'; millis: number };

export interface StreamQuery {
  /** OpenHands' current parameter: `all`, or `since` with `after_timestamp`; it wins over resend_all. */
  resend_mode?: string;
  after_timestamp?: string;
  resend_all?: string;
  after_event_id?: string;
}

// The spellings of a boolean that FastAPI (pydantic) accepts in a query, which OpenHands clients use.
const TRUE_VALUES = new Set(['1', 'true', 't', 'yes', 'y', 'on']);
const FALSE_VALUES = new Set(['0', 'false', 'f', 'no', 'n', 'off']);

/**
 * Reads `resend_mode` (with `after_timestamp`), else `resend_all`, and our `after_event_id`; a close
 * when they are malformed or contradict. As in OpenHands, `since` without a timestamp resends nothing.
 */
export function parseStreamStart(query: StreamQuery): StreamStart | StreamClose {
  if (query.after_timestamp !== undefined && !isTimestamp(query.after_timestamp)) {
    return { code: StreamCloseCode.badRequest, reason: 'after_timestamp must be a date-time' };
  }
  if (query.resend_mode !== undefined) {
    if (query.resend_mode !== 'all' && query.resend_mode !== 'since') {
      return { code: StreamCloseCode.badRequest, reason: "resend_mode must be 'all' or 'since'" };
    }
    if (query.after_event_id !== undefined) {
      return { code: StreamCloseCode.badRequest, reason: 'pass resend_mode or after_event_id, not both' };
    }
    if (query.resend_mode === 'all') return { from: 'beginning' };
    return query.after_timestamp === undefined ? { from: 'now' } : { from: 'since', millis: timestampMillis(query.after_timestamp) };
  }
  let resendAll = false;
  if (query.resend_all !== undefined) {
    const value = query.resend_all.trim().toLowerCase();
    if (!TRUE_VALUES.has(value) && !FALSE_VALUES.has(value)) {
      return { code: StreamCloseCode.badRequest, reason: 'resend_all must be a boolean' };
    }
    resendAll = TRUE_VALUES.has(value);
  }
  if (query.after_event_id !== undefined) {
    if (resendAll) return { code: StreamCloseCode.badRequest, reason: 'pass resend_all or after_event_id, not both' };
    if (query.after_event_id === '') return { code: StreamCloseCode.badRequest, reason: 'after_event_id must not be empty' };
    return { from: 'after', eventId: query.after_event_id };
  }
  return { from: resendAll ? 'beginning' : 'now' };
}

/**
 * The position of the first event to send, or a close when `after_event_id` is not in the log. For
 * `since`, the first event at or after the timestamp; events are appended in time order, so every
 * later one is sent too.
 */
export async function startPosition(start: StreamStart, log: EventLog): Promise<number | StreamClose> {
  switch (start.from) {
    case 'since': {
      const first = await log.search({ timestampGte: start.millis, sortOrder: 'TIMESTAMP', limit: 1 });
      const event = first.items[0];
      return event === undefined ? log.size : (log.positionOf(event.id) ?? log.size);
    }
    case 'now':
      return log.size;
    case 'beginning':
      return 0;
    case 'after': {
      const position = log.positionOf(start.eventId);
      if (position === undefined) {
        // The id stays out of the reason: a close reason is limited to 123 bytes.
        return { code: StreamCloseCode.badRequest, reason: 'after_event_id names no event of this conversation' };
      }
      return position + 1;
    }
  }
}
