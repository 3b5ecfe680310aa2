import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveWebSocketUpgradesOnly } from '../../http/upgrade.js';
import type { Logger } from '../../logger.js';
import type { SandboxServerConfig } from '../config.js';
import type { DataDirLock } from '../installation/data-dir-lock.js';
import type { EventFeed } from '../lifecycle-events/event-feed.js';
import type { Component } from './component.js';

/** In-flight requests get this long to finish on shutdown before their connections are cut. */
const DRAIN_TIMEOUT_MS = 10_000;

export interface HttpServerOptions {
  config: SandboxServerConfig;
  listener: RequestListener;
  injectWebSocket: (server: Server) => void;
  /** Its streams are ended on stop: they never end by themselves, and requests in flight must drain. */
  events: EventFeed;
  /** Told the port listened on, for whoever finds the data directory taken. */
  lock: DataDirLock | undefined;
  log: Logger;
}

/** Listens on HOST:PORT; returns the URL listened on (PORT=0 picks a free port). */
export function httpServerComponent({ config, listener, injectWebSocket, events, lock, log }: HttpServerOptions): Component<string> {
  let server: Server | undefined;
  return {
    name: 'HTTP server',
    async start() {
      const listening = await listen(listener, config.HOST, config.PORT);
      serveWebSocketUpgradesOnly(listening, injectWebSocket, log);
      const { port } = listening.address() as AddressInfo;
      try {
        await lock?.setPort(port);
      } catch (error) {
        await stopListening(listening);
        throw error;
      }
      server = listening;
      if (config.SANDBOX_SERVER_API_KEYS.length + config.SANDBOX_SERVER_ADMIN_KEYS.length === 0) {
        log.warn('authentication is off: SANDBOX_SERVER_API_KEYS is not set, so anyone who can reach this address controls the sandboxes');
      }
      return `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
    },
    async stop() {
      events.endStreams();
      if (server) await stopListening(server);
    },
  };
}

function listen(listener: RequestListener, hostname: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer(listener);
    server.once('error', reject);
    server.listen(port, hostname, () => resolve(server));
  });
}

/** server.close() waits for requests in flight (and closes idle keep-alive connections). */
async function stopListening(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const timer = setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS);
  await closed;
  clearTimeout(timer);
}
