/**
 * Headers that describe one connection, not the message (RFC 9110 7.6.1): a proxy drops them from
 * what it passes on, both ways. `content-length` goes too, since bodies are streamed on chunked and
 * their length is left to the server that sends them.
 */
export const HOP_REQUEST_HEADERS = [
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
] as const;

export const HOP_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'content-length']);
