/**
 * How a caller presents an agent-server's session key: in this header, or, on a WebSocket (whose
 * browser API cannot set headers), in this query parameter. The one spelling of both names in
 * src/ (test/contract-words.test.ts checks the header's).
 */
export const SESSION_KEY_HEADER = 'X-Session-API-Key';

/** The header's name as node:http and fetch's Headers give it, lower case, for maps keyed that way. */
export const SESSION_KEY_HEADER_LOWER = SESSION_KEY_HEADER.toLowerCase();

export const SESSION_KEY_QUERY = 'session_api_key';
