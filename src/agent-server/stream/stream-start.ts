import type { EventLog } from '../store/index.js';
import { StreamCloseCode, type StreamClose } from './close-codes.js';

/** Where a subscriber's stream begins, as its query asks. */
export type StreamStart = { from: 'now' } | { from: 'beginning' } | { from: 'after'; eventId: string };

export interface StreamQuery {
  resend_all?: string;
  after_event_id?: string;
}

// The spellings of a boolean that FastAPI (pydantic) accepts in a query, which OpenHands clients use.
const TRUE_VALUES = new Set(['1', 'true', 't', 'yes', 'y', 'on']);
const FALSE_VALUES = new Set(['0', 'false', 'f', 'no', 'n', 'off']);

/** Reads `resend_all` and our `after_event_id`; a close when they are malformed or contradict. */
export function parseStreamStart(query: StreamQuery): StreamStart | StreamClose {
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

/** The position of the first event to send, or a close when `after_event_id` is not in the log. */
export function startPosition(start: StreamStart, log: EventLog): number | StreamClose {
  switch (start.from) {
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
