import { createServer as createHttpServer, type IncomingMessage, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer, type Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { HOP_REQUEST_HEADERS, HOP_RESPONSE_HEADERS } from '../../http/hop-headers.js';
import type { Logger } from '../../logger.js';
import { decideEgress, type EgressRules, entryCovers, formatEgressEntry } from '../net/egress-policy.js';
import { pipeTunnel } from './pipe-tunnel.js';
import { serverNameOf } from './tls-sni.js';
import { type ResolveUpstream, UpstreamRefused } from './upstream.js';

/**
 * The control plane's egress proxy: the only way an `allowlist` sandbox reaches a name. Three doors
 * lead in, all judged by the same policy check (admit):
 * - a forward proxy (HTTP_PROXY: `GET http://name/...`), judged by the URL's host;
 * - CONNECT (HTTPS_PROXY), judged by the host:port asked for;
 * - the transparent door, where the packet rules send a sandbox's connections to ports 80 and 443
 *   made without the proxy settings: judged by the TLS ClientHello's server name or the HTTP Host.
 * A sandbox is known by its source address alone (identify): its own network's rules let only its
 * address in, and a spoofed one could not complete a TCP handshake.
 *
 * An allowed tunnel (CONNECT, or caught TLS) is a byte pipe unless `interceptConnect` hands it to
 * a handler of its own: the seam where a TLS-terminating handler (brokered secrets) plugs in.
 */

/** What the proxy knows of a sandbox it serves. */
export interface EgressSandbox {
  sandboxId: string;
  rules: EgressRules;
  /** Its network's gateway: the host's address on it, where the proxy and the resolver answer it. */
  gateway: string;
}

/** An allowed destination: the name (or address) asked for, and the address the proxy dials. */
export interface EgressTarget {
  sandboxId: string;
  host: string;
  port: number;
  address: string;
}

/**
 * Takes a client's stream for an allowed tunnel instead of the byte pipe; the stream begins with
 * what the client sent first (its TLS ClientHello), and `target` says where it may go.
 */
export type ConnectHandler = (client: Duplex, target: EgressTarget) => void;

export type DenialVia = 'proxy' | 'dns' | 'packet';

export interface EgressDenial {
  sandboxId: string;
  via: DenialVia;
  /** What was asked for: `name:port`, a DNS name, an address. */
  target: string;
  reason: string;
}

export interface EgressProxyOptions {
  /** The sandbox a connection's source address belongs to; undefined for any other. */
  identify: (address: string) => EgressSandbox | undefined;
  resolveUpstream: ResolveUpstream;
  onDenied: (denial: EgressDenial) => void;
  /** Per allowed tunnel: a handler to take it (TLS termination), or undefined to pipe bytes. */
  interceptConnect?: (target: EgressTarget) => ConnectHandler | undefined;
  log: Logger;
}

type Admission = { target: EgressTarget } | { status: 403 | 502; reason: string };

/** Most bytes of a caught connection read before its TLS server name or HTTP Host must show. */
const SNIFF_LIMIT = 16 * 1024;
const SNIFF_TIMEOUT_MS = 10_000;

export class EgressProxy {
  readonly #options: EgressProxyOptions;
  readonly #http: Server;
  readonly #transparent: NetServer;

  constructor(options: EgressProxyOptions) {
    this.#options = options;
    this.#http = createHttpServer((request, response) => void this.#forward(request, response));
    this.#http.on('connect', (request: IncomingMessage, socket: Socket, head: Buffer) => void this.#connect(request, socket, head));
    this.#http.on('clientError', (_error, socket: Duplex) => socket.destroy());
    this.#transparent = createServer((socket) => this.#sniff(socket));
  }

  /** Listens on `host`: the proxy on `port`, the transparent door on `transparentPort` (0: free ones); resolves to the ports taken. */
  async listen(host: string, port: number, transparentPort: number): Promise<{ port: number; transparentPort: number }> {
    const listenOn = (server: Server | NetServer, wanted: number) =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(wanted, host, () => resolve((server.address() as AddressInfo).port));
      });
    return { port: await listenOn(this.#http, port), transparentPort: await listenOn(this.#transparent, transparentPort) };
  }

  async close(): Promise<void> {
    this.#http.closeAllConnections();
    await Promise.all([this.#http, this.#transparent].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }

  /** Judges a destination for the sandbox at `source`: its policy on the name, then deny entries on the address dialed. */
  async #admit(source: string | undefined, host: string, port: number): Promise<Admission> {
    const sandbox = this.#options.identify(normalizeAddress(source ?? ''));
    if (!sandbox) return { status: 403, reason: 'not a sandbox with an egress policy' };
    const name = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
    const deny = (reason: string): Admission => {
      this.#options.onDenied({ sandboxId: sandbox.sandboxId, via: 'proxy', target: `${name}:${port}`, reason });
      return { status: 403, reason };
    };
    const decision = decideEgress(sandbox.rules, name, port);
    if (!decision.allowed) return deny(decision.entry ? `denied by ${formatEgressEntry(decision.entry)}` : 'not in the allow list');
    let address: string;
    try {
      address = await this.#options.resolveUpstream(name);
    } catch (error) {
      if (error instanceof UpstreamRefused) return deny(error.message);
      return { status: 502, reason: `cannot resolve ${name}` };
    }
    const deniedAddress = sandbox.rules.deny.find((entry) => entry.kind === 'cidr' && entryCovers(entry, address, port));
    if (deniedAddress) return deny(`${name} is ${address}, denied by ${formatEgressEntry(deniedAddress)}`);
    return { target: { sandboxId: sandbox.sandboxId, host: name, port, address } };
  }

  /** A forward-proxy request (absolute URL) or a caught plain HTTP one (Host header). */
  async #forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = parseTarget(request);
    if (!url) return refuse(response, 400, 'the request names no host');
    const admission = await this.#admit(request.socket.remoteAddress, url.hostname, Number(url.port || 80));
    if (!('target' in admission)) return refuse(response, admission.status, admission.reason);
    const { target } = admission;
    const headers = { ...request.headers };
    for (const name of [...HOP_REQUEST_HEADERS, 'proxy-connection']) if (name !== 'content-length' && name !== 'transfer-encoding') delete headers[name];
    const upstream = httpRequest({ host: target.address, port: target.port, method: request.method, path: `${url.pathname}${url.search}`, headers, setHost: false });
    upstream.on('response', (answer) => {
      const answerHeaders = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !HOP_RESPONSE_HEADERS.has(name) || name === 'content-length' || name === 'transfer-encoding'));
      response.writeHead(answer.statusCode ?? 502, answer.statusMessage, answerHeaders);
      answer.pipe(response);
    });
    upstream.on('error', (error) => (response.headersSent ? response.destroy() : refuse(response, 502, `${target.host}:${target.port}: ${error.message}`)));
    response.on('close', () => upstream.destroy());
    request.pipe(upstream);
  }

  async #connect(request: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(request.url ?? '');
    if (!match) return void client.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\nCONNECT needs host:port\n');
    const admission = await this.#admit(client.remoteAddress, match[1] as string, Number(match[2]));
    if (!('target' in admission)) {
      const status = admission.status === 403 ? '403 Forbidden' : '502 Bad Gateway';
      return void client.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\n${admission.reason}\n`);
    }
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) client.unshift(head);
    this.#tunnel(client, admission.target);
  }

  /** Pipes an allowed tunnel's bytes to its target, unless a handler takes it. */
  #tunnel(client: Duplex, target: EgressTarget): void {
    const handler = this.#options.interceptConnect?.(target);
    if (handler) return handler(client, target);
    pipeTunnel(client, target);
  }

  /** The transparent door: reads until the TLS server name or the HTTP request shows, then judges it. */
  #sniff(socket: Socket): void {
    let seen = Buffer.alloc(0);
    socket.setTimeout(SNIFF_TIMEOUT_MS, () => socket.destroy());
    socket.on('error', () => socket.destroy());
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      if (seen[0] !== 0x16) {
        // Plain HTTP: the HTTP server reads the request and judges its Host header.
        socket.off('data', onData);
        socket.setTimeout(0);
        socket.pause();
        socket.unshift(seen);
        this.#http.emit('connection', socket);
        socket.resume();
        return;
      }
      const name = serverNameOf(seen);
      if (name === 'incomplete' && seen.length < SNIFF_LIMIT) return;
      socket.off('data', onData);
      socket.setTimeout(0);
      socket.pause();
      void this.#admitCaughtTls(socket, seen, name === 'incomplete' ? null : name);
    };
    socket.on('data', onData);
  }

  async #admitCaughtTls(socket: Socket, hello: Buffer, name: string | null): Promise<void> {
    const sandbox = this.#options.identify(normalizeAddress(socket.remoteAddress ?? ''));
    if (name === null) {
      if (sandbox) this.#options.onDenied({ sandboxId: sandbox.sandboxId, via: 'proxy', target: `${socket.localAddress}:443`, reason: 'TLS without a server name' });
      return void socket.destroy();
    }
    const admission = await this.#admit(socket.remoteAddress, name, 443);
    if (!('target' in admission)) return void socket.destroy();
    socket.unshift(hello);
    socket.resume();
    this.#tunnel(socket, admission.target);
  }
}

function parseTarget(request: IncomingMessage): URL | undefined {
  try {
    if (/^https?:\/\//i.test(request.url ?? '')) return new URL(request.url as string);
    const host = request.headers.host;
    return host ? new URL(`http://${host}${request.url ?? '/'}`) : undefined;
  } catch {
    return undefined;
  }
}

function refuse(response: ServerResponse, status: number, reason: string): void {
  response.writeHead(status, { 'content-type': 'text/plain', connection: 'close' }).end(`${reason}\n`);
}

/** An IPv4 client of a dual-stack listener shows as ::ffff:a.b.c.d. */
export function normalizeAddress(address: string): string {
  return address.replace(/^::ffff:/, '');
}
