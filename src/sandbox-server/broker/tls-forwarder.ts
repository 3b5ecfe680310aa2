import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { rootCertificates, TLSSocket } from 'node:tls';
import type { Logger } from '../../logger.js';
import { HOP_RESPONSE_HEADERS } from '../../http/hop-headers.js';
import type { LeafContexts } from './leaf-contexts.js';
import { secretsForHost, type BrokeredSecret } from './brokered-secret.js';
import { swapPlaceholders } from './swap-headers.js';

/** A connection a sandbox opened to `host:port` through the egress proxy, with the secrets it holds placeholders of. */
export interface BrokeredConnection {
  host: string;
  port: number;
  /** The address to dial, as the egress policy resolved `host`; absent, `host` is looked up (TlsForwarderOptions.lookup). */
  address?: string;
  secrets: readonly BrokeredSecret[];
  /** For the log lines. */
  sandboxId?: string;
}

export interface TlsForwarderOptions {
  contexts: LeafContexts;
  /** CAs upstream certificates may also chain to, besides Node's roots (Mozilla's): SANDBOX_EGRESS_CA_FILE, a test's CA. */
  upstreamCa?: readonly string[];
  /** How upstream names become addresses: the egress policy's resolver, or a test's. */
  lookup?: LookupFunction;
  log: Logger;
}

export interface TlsForwarder {
  /** Takes over `socket`, just answered `200` to a CONNECT (or intercepted), with any bytes read past the request in `head`. */
  handle(socket: Duplex, connection: BrokeredConnection, head?: Buffer): void;
  close(): void;
}

// The client's view of the connection: these go no further than us (content-length stays, since
// bodies pass through unchanged and git's http-backend wants it).
const HOP_REQUEST = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'upgrade']);

/**
 * Terminates the TLS of connections sandboxes make to hosts a brokered secret is meant for, with a
 * leaf minted under the installation's CA, and sends each HTTP request on to the real host over a
 * verified TLS connection of its own, its headers' placeholders swapped for the secrets meant for
 * that host. The host is the one the sandbox asked the proxy for; a request inside the tunnel
 * cannot name another (its Host header goes along, but the connection goes where it was opened).
 */
export function createTlsForwarder(options: TlsForwarderOptions): TlsForwarder {
  // Node's `ca` replaces its roots rather than adding to them, so extra CAs come with the roots.
  const ca = options.upstreamCa && options.upstreamCa.length > 0 ? [...rootCertificates, ...options.upstreamCa] : undefined;
  const agent = new Agent({ keepAlive: true, maxFreeSockets: 16, ca, lookup: options.lookup });
  const connections = new WeakMap<object, BrokeredConnection>();
  const connectionOf = (request: IncomingMessage) => connections.get(request.socket) as BrokeredConnection;

  const upstreamRequest = (request: IncomingMessage, connection: BrokeredConnection) => {
    const { headers, used } = swapPlaceholders(withoutHopHeaders(request.headers), secretsForHost(connection.secrets, connection.host));
    if (used.length > 0) options.log.debug({ sandboxId: connection.sandboxId, host: connection.host, secrets: used }, 'brokered secrets put in a request');
    return httpsRequest({
      host: connection.address ?? connection.host,
      port: connection.port,
      servername: isIP(connection.host) ? undefined : connection.host,
      method: request.method,
      path: request.url,
      headers,
      agent,
    });
  };

  const server = createServer({ requestTimeout: 0, headersTimeout: 60_000 }, (request: IncomingMessage, response: ServerResponse) => {
    const connection = connectionOf(request);
    let upstream;
    try {
      upstream = upstreamRequest(request, connection);
    } catch (error) {
      // A header Node refuses to send (a value with a control character): the client's own doing.
      badGateway(response, `sandbox-server egress: the request could not be sent on: ${(error as Error).message}`);
      request.resume();
      return;
    }
    upstream.on('response', (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.statusMessage, withoutHopResponseHeaders(answer.headers));
      answer.pipe(response);
    });
    upstream.on('error', (error) => {
      options.log.info({ sandboxId: connection.sandboxId, host: connection.host, err: error.message }, 'egress upstream failed');
      badGateway(response, `sandbox-server egress: ${connection.host}:${connection.port} failed: ${error.message}`);
    });
    response.on('close', () => {
      if (!response.writableFinished) upstream.destroy();
    });
    request.pipe(upstream);
  });

  server.on('upgrade', (request: IncomingMessage, client: Duplex, head: Buffer) => {
    const connection = connectionOf(request);
    let upstream;
    try {
      upstream = upstreamRequest(request, connection);
    } catch {
      client.end('HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    upstream.setHeader('connection', 'Upgrade');
    upstream.setHeader('upgrade', request.headers.upgrade ?? '');
    upstream.on('upgrade', (answer, socket, upstreamHead) => {
      const lines = [`HTTP/1.1 ${answer.statusCode ?? 101} ${answer.statusMessage ?? ''}`];
      for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
      client.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (upstreamHead.length > 0) client.write(upstreamHead);
      if (head.length > 0) socket.write(head);
      socket.pipe(client).pipe(socket);
      socket.on('error', () => client.destroy());
      client.on('error', () => socket.destroy());
    });
    upstream.on('response', (answer) => {
      client.end(`HTTP/1.1 ${answer.statusCode ?? 502} ${answer.statusMessage ?? ''}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
      answer.resume();
    });
    upstream.on('error', () => client.destroy());
    upstream.end();
  });

  return {
    handle(socket, connection, head) {
      if (head && head.length > 0) socket.unshift(head);
      const tls = new TLSSocket(socket, { isServer: true, secureContext: options.contexts.for(connection.host), ALPNProtocols: ['http/1.1'] });
      connections.set(tls, connection);
      tls.on('error', (error) => {
        options.log.debug({ sandboxId: connection.sandboxId, host: connection.host, err: error.message }, 'egress TLS from the sandbox failed');
        socket.destroy();
      });
      socket.on('error', () => tls.destroy());
      server.emit('connection', tls);
    },
    close() {
      server.close();
      server.closeAllConnections();
      agent.destroy();
    },
  };
}

function withoutHopHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const connectionNamed = new Set(String(headers.connection ?? '').toLowerCase().split(',').map((name) => name.trim()));
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_REQUEST.has(name) && !connectionNamed.has(name)));
}

function withoutHopResponseHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_RESPONSE_HEADERS.has(name) || name === 'content-length'));
}

function badGateway(response: ServerResponse, message: string): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  response.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' }).end(`${message}\n`);
}
