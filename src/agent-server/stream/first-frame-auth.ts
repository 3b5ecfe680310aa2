/**
 * OpenHands' first-message auth for WebSockets: a client that put no key in the URL or a header
 * sends `{"type":"auth","session_api_key":"..."}` as its first frame, so the key stays out of URLs
 * and proxy logs. Until that frame arrives (within AUTH_TIMEOUT_MS) nothing is streamed; a wrong
 * or missing key closes the socket with 4001, as a wrong key in the URL does.
 */
import type { WSContext, WSEvents, WSMessageReceive } from 'hono/ws';
import type { WebSocket } from 'ws';
import { StreamCloseCode } from './close-codes.js';

export const AUTH_TIMEOUT_MS = 10_000;

/** A frame that only re-states the key: sent by clients that authenticate both ways; ignored. */
export function isAuthFrame(data: unknown): boolean {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return false;
  const keys = Object.keys(data);
  return (data as { type?: unknown }).type === 'auth' && keys.every((key) => key === 'type' || key === 'session_api_key');
}

function keyOfAuthFrame(data: WSMessageReceive): string | undefined {
  if (typeof data !== 'string') return undefined;
  try {
    const frame: unknown = JSON.parse(data);
    if (typeof frame !== 'object' || frame === null || (frame as { type?: unknown }).type !== 'auth') return undefined;
    const key = (frame as { session_api_key?: unknown }).session_api_key;
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Wraps the socket's handlers: the first frame must carry a valid key, then `authenticated()`
 * builds the real handlers, which get an `onOpen` at that moment and every later frame.
 */
export function withFirstFrameAuth(
  isValidKey: (key: string | undefined) => boolean,
  authenticated: () => Promise<WSEvents<WebSocket>>,
): WSEvents<WebSocket> {
  let inner: WSEvents<WebSocket> | undefined;
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  const refuse = (ws: WSContext<WebSocket>) => ws.close(StreamCloseCode.unauthorized, 'Authentication failed');
  return {
    onOpen(_event, ws) {
      timer = setTimeout(() => {
        settled = true;
        refuse(ws);
      }, AUTH_TIMEOUT_MS);
    },
    onMessage(event, ws) {
      if (inner) return inner.onMessage?.(event, ws);
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!isValidKey(keyOfAuthFrame(event.data))) return refuse(ws);
      void authenticated().then((handlers) => {
        inner = handlers;
        inner.onOpen?.(new Event('open'), ws);
      });
    },
    onClose(event, ws) {
      clearTimeout(timer);
      inner?.onClose?.(event, ws);
    },
    onError(event, ws) {
      inner?.onError?.(event, ws);
    },
  };
}
