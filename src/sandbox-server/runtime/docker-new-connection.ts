import http from 'node:http';
import https from 'node:https';
import type Docker from 'dockerode';

/** A ping that has not answered after this long counts as refused. */
const PING_TIMEOUT_MS = 5_000;

/** Where docker-modem connects: a socket, or a host and port (TLS when the protocol is https). */
interface ModemAddress {
  protocol?: string;
  /** The socket's path; docker-modem finds the default one lazily. */
  getSocketPath(): Promise<string | undefined> | undefined;
  host?: string;
  port?: string | number;
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
}

/**
 * Pings the engine on a connection of its own, never one from the pool. A dockerd shutting down
 * closes its listener first and then stops its containers, while still serving the connections it
 * has (the event stream, pooled keep-alive sockets): their `die` events and inspects look like
 * crashes unless a new connection is tried. Every ssh:// request dials anew already.
 */
export async function takesNewConnections(docker: Docker): Promise<boolean> {
  // docker-modem keeps where it connects in fields its type declarations leave out.
  const modem = docker.modem as unknown as ModemAddress;
  if (modem.protocol === 'ssh') return docker.ping().then(() => true, () => false);
  const request = modem.protocol === 'https' ? https.request : http.request;
  const socketPath = await modem.getSocketPath();
  const target = socketPath ? { socketPath } : { host: modem.host, port: modem.port, ca: modem.ca, cert: modem.cert, key: modem.key };
  return new Promise((resolve) => {
    const ping = request({ ...target, path: '/_ping', agent: false, timeout: PING_TIMEOUT_MS }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    ping.on('timeout', () => ping.destroy());
    ping.on('error', () => resolve(false));
    ping.end();
  });
}
