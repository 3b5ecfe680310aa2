/**
 * Node hands every request carrying `Connection: upgrade` to the server's 'upgrade' listeners, and
 * the WebSocket adapter answers any of them by running the app as a bodiless GET: `curl --http2`
 * (`Upgrade: h2c`) got 200 and an empty body on every route. Only WebSocket upgrades reach the
 * adapter; any other is refused with 400 and a FastAPI body, on the connection it came on, which is
 * then closed (what follows the headers is no longer HTTP/1.1 the server could read).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { logger as rootLogger, type Logger } from '../logger.js';
import { requestIdFrom, REQUEST_ID_HEADER } from './request-log/index.js';
import { loggedPath } from './request-log/logged-path.js';

type UpgradeListener = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** Lets `injectWebSocket` add its 'upgrade' listener to `server`, behind a check that the upgrade is to WebSocket. */
export function serveWebSocketUpgradesOnly(server: Server, injectWebSocket: (server: Server) => void, log: Logger = rootLogger): void {
  const before = new Set(server.listeners('upgrade'));
  injectWebSocket(server);
  const added = server.listeners('upgrade').filter((listener) => !before.has(listener)) as UpgradeListener[];
  for (const listener of added) server.off('upgrade', listener);
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (isWebSocketUpgrade(request.headers.upgrade)) {
      for (const listener of added) listener(request, socket, head);
      return;
    }
    refuseUpgrade(request, socket, log);
  });
}

export function isWebSocketUpgrade(upgrade: string | undefined): boolean {
  return (upgrade ?? '').split(',').some((protocol) => protocol.trim().toLowerCase() === 'websocket');
}

function refuseUpgrade(request: IncomingMessage, socket: Duplex, log: Logger): void {
  socket.on('error', () => {});
  const detail = `Upgrade to ${JSON.stringify(String(request.headers.upgrade).slice(0, 64))} is not supported: send the request over HTTP/1.1 without it, or upgrade to websocket`;
  const body = JSON.stringify({ detail });
  const requestId = requestIdFrom(request.headers[REQUEST_ID_HEADER] as string | undefined);
  socket.end(
    'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n' +
      `${REQUEST_ID_HEADER}: ${requestId}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  log.info({ request_id: requestId, method: request.method, ...loggedPath(request.url ?? '/', false), status: 400 }, 'upgrade refused');
}
