/**
 * Close codes of `/sockets/events/{conversation_id}`. OpenHands clients know 4001 and 4004; the
 * other 4xxx code mirrors the HTTP status a REST call with the same mistake would get, and the 1xxx
 * ones are RFC 6455's.
 */
export const StreamCloseCode = {
  /** The session API key is missing or wrong. */
  unauthorized: 4001,
  /** No conversation has this id. */
  conversationNotFound: 4004,
  /**
   * A malformed `resend_all`, both `resend_all` and `after_event_id`, or an `after_event_id` that
   * names no event of the conversation. Not 4004: clients read that as "the conversation is gone"
   * and stop reconnecting, while this is a mistake in the request.
   */
  badRequest: 4400,
  /**
   * The subscriber's socket stayed over its buffer limit for too long. "Try Again Later": nothing is
   * lost, reconnecting with `after_event_id` set to the last event received resumes the stream.
   */
  tooSlow: 1013,
  /** The conversation state or its event log could not be read. */
  internalError: 1011,
} as const;

export interface StreamClose {
  code: number;
  reason: string;
}
