/**
 * The LLM relay: the one way a sandbox's agent reaches its LLM. The agent presents its
 * conversation's relay token where its provider's key would go; the relay finds the conversation's
 * route, sends the call on to the provider with the real key in the same place, and streams the
 * answer back as it comes, counting the tokens it reports. Paths and bodies pass unchanged, so
 * every dialect the agent speaks (streamed or not) works; the real key never enters the sandbox.
 *
 * Answers the relay makes itself carry LLM_RELAY_VERDICT_HEADER, which the agent takes as final
 * (no retries for minutes): no or a wrong token, no key for a public provider, a path that is not
 * an LLM call, a provider that cannot be reached.
 */
import { Agent as HttpAgent, createServer, type IncomingMessage, type OutgoingHttpHeaders, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { LLM_RELAY_VERDICT_HEADER, type LLM_RELAY_VERDICTS } from '../../contracts/llm-providers.js';
import type { Logger } from '../../logger.js';
import type { RelayMetrics } from './relay-metrics.js';
import { presentedToken, upstreamHeaders, upstreamUrlFor } from './relay-request.js';
import type { RelayRoute, RelayRoutes } from './relay-routes.js';
import { UsageMeter } from './token-usage.js';

type Verdict = (typeof LLM_RELAY_VERDICTS)[number];

export interface LlmRelayOptions {
  routes: Pick<RelayRoutes, 'find' | 'recordUsage'>;
  /** LLM_API_KEY: the key of conversations that brought none. */
  serverKey: string | null;
  /** Whether a connection from this address is served at all (loopback and the sandboxes' networks). */
  acceptsFrom: (address: string) => boolean;
  metrics: RelayMetrics;
  log: Logger;
  /** How long connecting to the provider may take before it counts as unreachable. */
  connectTimeoutMs?: number;
}

export interface LlmRelayListener {
  port: number;
  close(): Promise<void>;
}

/** The largest call sent on; the agent's calls are its messages, images included. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const RESPONSE_HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'trailer', 'upgrade', 'proxy-connection']);

export function createLlmRelayHandler(options: LlmRelayOptions): (req: IncomingMessage, res: ServerResponse) => void {
  // Kept-alive connections to the provider: the relay adds no handshake to most calls.
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;

  async function relay(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://relay.invalid');
    const presented = presentedToken(req.headers, url);
    if (!presented) return refuse(res, 401, 'unauthorized', 'no relay key: the LLM relay answers the agents of this control plane\'s sandboxes only');
    let route: RelayRoute | null;
    try {
      route = await options.routes.find(presented.token);
    } catch (error) {
      options.log.warn({ err: error }, 'the LLM relay could not look a route up');
      // No verdict: the database being away passes, and the agent retries.
      return answer(res, 503, 'the LLM relay cannot reach its database');
    }
    if (!route) return refuse(res, 401, 'unauthorized', 'this relay key belongs to no live conversation');
    const realKey = route.apiKey ?? options.serverKey;
    if (realKey === null && route.publicDefault) {
      return refuse(res, 401, 'unconfigured', `no LLM key: the control plane has no LLM_API_KEY and the conversation brought no llm_api_key, and ${new URL(route.upstream).origin} needs one (or set LLM_BASE_URL to an LLM that needs none)`);
    }
    const target = req.method === 'POST' ? upstreamUrlFor(route.upstream, req.url ?? '/', presented.place, realKey) : null;
    if (!target) return refuse(res, 404, 'refused', `the LLM relay sends on LLM calls only (POST …/chat/completions, …/responses, …/messages, /api/chat under ${new URL(route.upstream).pathname})`);
    await forward(req, res, route, target, upstreamHeaders(req.headers, presented.place, realKey));
  }

  async function forward(req: IncomingMessage, res: ServerResponse, route: RelayRoute, target: URL, headers: OutgoingHttpHeaders): Promise<void> {
    const body = await readBody(req);
    if (body === null) return refuse(res, 413, 'refused', `an LLM call of more than ${MAX_BODY_BYTES / 1024 / 1024} MB`);
    send(res, route, target, { ...headers, 'content-length': body.length }, body, true);
  }

  /** One attempt; `mayRetry`: a kept-alive connection the provider had just closed is tried once more on a new one. */
  function send(res: ServerResponse, route: RelayRoute, target: URL, headers: OutgoingHttpHeaders, body: Buffer, mayRetry: boolean): void {
    const secure = target.protocol === 'https:';
    const upstream = (secure ? httpsRequest : httpRequest)(target, { method: 'POST', headers, agent: secure ? agents.https : agents.http });
    upstream.on('socket', (socket: Socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => upstream.destroy(Object.assign(new Error(`no connection within ${connectTimeoutMs} ms`), { code: 'ETIMEDOUT' })), connectTimeoutMs);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (res.headersSent) return res.destroy(error);
      if (mayRetry && upstream.reusedSocket && error.code === 'ECONNRESET') return send(res, route, target, headers, body, false);
      options.metrics.countCall('unreachable');
      refuse(res, 502, 'unreachable', `the LLM at ${target.origin} could not be reached: ${error.code ?? error.message}`);
    });
    upstream.on('response', (answer) => {
      const meter = new UsageMeter(String(answer.headers['content-type'] ?? ''));
      const ok = (answer.statusCode ?? 500) < 300;
      // Sent with the first chunk rather than flushed alone: one write less per call.
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, passableHeaders(answer.headers));
      answer.on('data', (chunk: Buffer) => {
        if (ok) meter.push(chunk);
        res.write(chunk);
      });
      answer.on('end', () => {
        res.end();
        options.metrics.countCall(ok ? 'answered' : 'provider_error');
        if (!ok) return;
        const tokens = meter.finish();
        options.metrics.countTokens(tokens);
        options.routes.recordUsage(route.conversationId, tokens);
      });
      answer.on('error', (error) => res.destroy(error));
    });
    // The agent gave up (its timeout, a pause): the provider's call stops too.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.end(body);
  }

  function refuse(res: ServerResponse, status: number, verdict: Verdict, message: string): void {
    if (verdict !== 'unreachable') options.metrics.countCall(verdict);
    answer(res, status, message, verdict);
  }

  return (req, res) => {
    relay(req, res).catch((error: unknown) => {
      options.log.error({ err: error }, 'the LLM relay failed');
      if (!res.headersSent) answer(res, 500, 'the LLM relay failed');
      else res.destroy();
    });
  };
}

/** An OpenAI-style error body, which every dialect's client reads the message of. */
function answer(res: ServerResponse, status: number, message: string, verdict?: Verdict): void {
  const body = JSON.stringify({ error: { message, type: 'llm_relay_error' } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(verdict ? { [LLM_RELAY_VERDICT_HEADER]: verdict } : {}) });
  res.end(body);
}

/** The whole request body, or null past MAX_BODY_BYTES. */
async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req) {
    bytes += (chunk as Buffer).length;
    if (bytes > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function passableHeaders(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !RESPONSE_HOP_BY_HOP.has(name)) kept[name] = value;
  }
  return kept;
}

/** Listens on `host:port` (0: a free one), closing at once every connection from an address it does not serve. */
export async function listenLlmRelay(options: LlmRelayOptions, host: string, port: number): Promise<LlmRelayListener> {
  const server: Server = createServer(createLlmRelayHandler(options));
  server.on('connection', (socket: Socket) => {
    if (!options.acceptsFrom(socket.remoteAddress ?? '')) socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
