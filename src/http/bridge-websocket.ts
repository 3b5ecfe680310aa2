import type { WSContext, WSEvents } from 'hono/ws';
import { WebSocket } from 'ws';
import { SESSION_KEY_QUERY } from '../contracts/agent-server/session-key.js';
import { logger } from '../logger.js';

const KEY_IN_QUERY = new RegExp(`${SESSION_KEY_QUERY}=[^&]*`);

/** Close codes that may not be sent in a close frame (RFC 6455 7.4.1); 1000 stands in for them. */
function sendableCloseCode(code: number): number {
  if (code === 1005 || code === 1006 || code === 1015) return 1000;
  return code >= 1000 && code < 5000 ? code : 1000;
}

/**
 * WebSocket events for a client connection that is bridged to `upstreamUrl`: frames flow both ways
 * unchanged, frames the client sends before the upstream is open are queued, and a close on either
 * side closes the other with the same code (so 4001 / 4004 from an agent-server reach the client).
 * `onFrame` is told of every data frame either way: a client following an agent's events over one
 * long-lived socket is using its sandbox as much as one sending requests. `headers` go with the
 * upstream handshake (a key the client must not see, the client's Origin for an app that checks it).
 */
export function bridgeWebSocket(upstreamUrl: string, onFrame: () => void = () => {}, headers: Record<string, string> = {}): WSEvents<WebSocket> {
  let upstream: WebSocket | undefined;
  const pending: (string | Buffer)[] = [];
  let clientClosed = false;

  return {
    onOpen(_event, client: WSContext<WebSocket>) {
      upstream = new WebSocket(upstreamUrl, { headers });
      upstream.on('open', () => {
        for (const frame of pending.splice(0)) upstream?.send(frame);
      });
      upstream.on('message', (data, isBinary) => {
        onFrame();
        if (client.readyState !== 1) return;
        const payload = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        client.raw?.send(payload, { binary: isBinary });
      });
      upstream.on('close', (code, reason) => {
        if (!clientClosed) client.close(sendableCloseCode(code), reason.toString());
      });
      upstream.on('error', (err) => {
        logger.warn({ err: err.message, upstream: upstreamUrl.replace(KEY_IN_QUERY, `${SESSION_KEY_QUERY}=[redacted]`) }, 'websocket upstream failed');
        if (!clientClosed) client.close(1011, 'agent server unreachable');
      });
    },
    onMessage(event) {
      onFrame();
      const frame = typeof event.data === 'string' ? event.data : Buffer.from(event.data as ArrayBuffer);
      if (upstream?.readyState === WebSocket.OPEN) upstream.send(frame);
      else pending.push(frame);
    },
    onClose() {
      clientClosed = true;
      if (upstream && upstream.readyState !== WebSocket.CLOSED) upstream.close();
    },
  };
}
