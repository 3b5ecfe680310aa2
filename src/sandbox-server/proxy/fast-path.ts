import { type IncomingMessage, type OutgoingHttpHeaders, request as httpRequest, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { SESSION_KEY_HEADER_LOWER } from '../../contracts/agent-server/session-key.js';
import { type DomainError, UpstreamError } from '../../errors/index.js';
import { firstRefusal, type AdmissionStep, type Arrival } from '../../http/admission.js';
import { domainErrorAnswer } from '../../http/errors.js';
import { observeRequest, type Metrics } from '../../http/metrics/index.js';
import { REQUEST_ID_HEADER, requestIdFrom, writeRequestLine } from '../../http/request-log/index.js';
import { logger as rootLogger, type Logger } from '../../logger.js';
import { engineAway } from './engine-away.js';
import { REQUEST_HEADERS_DROPPED, UPSTREAM } from './forward-http.js';
import type { TargetCache } from './target-cache.js';

/** The proxy route as the app registers it, and as requests answered here are labelled. */
export const PROXY_ROUTE = '/api/v1/sandboxes/:id/agent/*';
const PROXY_PREFIX = '/api/v1/sandboxes/';
/** The sandbox id, then the agent-server path (with its leading slash). */
const PROXY_PATH = /^\/api\/v1\/sandboxes\/([^/]{1,128})\/agent(\/.*)$/;

// The bytes are piped as they came, so their length stays true; the rest are per connection.
const RESPONSE_HEADERS_DROPPED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade']);

export interface ProxyFastPathOptions {
  /**
   * The steps the app's middleware takes before its proxy route (the browser guard's host and
   * site checks, the API key), built by the same functions: a request any of them refuses is left
   * to the app, which answers the refusal.
   */
  admission: readonly AdmissionStep[];
  targets: TargetCache;
  recordActivity(sandboxId: string): void;
  /** Whether the sandbox's engine answers: an unreachable sandbox is then a 503, not a 502. */
  engineAvailable(sandboxId: string): Promise<boolean>;
  metrics: Metrics;
  logger?: Logger;
}

/**
 * The common case of the proxy answered straight on node:http, before the Hono app: a program (no
 * `Origin`, no `Sec-Fetch-Site`) that the app's admission steps let in, asking a sandbox whose
 * agent-server target is in memory. The request and answer are piped byte for byte over a pooled
 * upstream connection; no web Request, Response or Headers is built and no router runs, which
 * together cost more than the hop itself. Its answers get the app's log line, metrics and error
 * bodies, from the same functions. Answers false, touching nothing, for every other request:
 * the app then serves it with its full checks and error answers (a refused key, a sandbox to look
 * up, resume or wait for, a WebSocket, a browser's request, which may need CORS headers).
 * test/sandbox-server/proxy/front-door-parity.test.ts holds the two to the same answers.
 */
export function createProxyFastPath(options: ProxyFastPathOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const log = options.logger ?? rootLogger;
  return function serveProxyFast(req, res) {
    if (!req.url?.startsWith(PROXY_PREFIX)) return false;
    const { headers } = req;
    if (headers.upgrade !== undefined || headers.origin !== undefined || headers['sec-fetch-site'] !== undefined) return false;
    const url = parseRequestUrl(req);
    const match = url && PROXY_PATH.exec(url.pathname);
    // An escaped id is left to the router, which decodes it before validating.
    if (!url || !match || match[1]!.includes('%')) return false;
    const sandboxId = match[1]!;
    const arrival: Arrival = { method: req.method ?? 'GET', url, header: (name) => firstValue(headers[name]) };
    if (firstRefusal(options.admission, arrival) !== undefined) return false;
    const target = options.targets.get(sandboxId);
    if (!target) return false;
    options.recordActivity(sandboxId);
    const startedAt = performance.now();
    const requestId = requestIdFrom(firstValue(headers[REQUEST_ID_HEADER]));
    const answered = (status: number) => {
      const request = { requestId, method: arrival.method, route: PROXY_ROUTE, path: url.pathname, authenticated: true, status, startedAt };
      writeRequestLine(log, request);
      observeRequest(options.metrics, request);
    };
    let responded = false;
    let failed = false;
    const outgoing = httpRequest(
      {
        host: target.host,
        port: target.port,
        method: req.method,
        path: `${match[2]}${url.search}`,
        headers: upstreamHeaders(req, target.sessionApiKey),
        agent: UPSTREAM,
      },
      (incoming) => {
        responded = true;
        const answer: OutgoingHttpHeaders = {};
        for (const name in incoming.headers) if (!RESPONSE_HEADERS_DROPPED.has(name)) answer[name] = incoming.headers[name];
        answer[REQUEST_ID_HEADER] = requestId;
        const status = incoming.statusCode ?? 502;
        // The head goes out with the first body bytes (or the end), not before: until then a
        // broken answer can still become a 502 rather than a connection closed with no bytes.
        const writeHead = () => {
          if (res.headersSent) return;
          res.writeHead(status, incoming.statusMessage, answer);
          answered(status);
        };
        incoming.once('data', writeHead);
        incoming.once('end', writeHead);
        incoming.pipe(res);
        incoming.once('error', fail);
      },
    );
    outgoing.once('error', fail);
    /**
     * The upstream failed: before answering (unreachable, or a head that breaks HTTP framing) or
     * while sending the body. A 502 (503 while the engine is away) when nothing was sent yet;
     * otherwise the client's connection is cut, the only way left to say the body is incomplete.
     */
    async function fail(error: Error): Promise<void> {
      if (failed || res.destroyed) return;
      failed = true;
      if (res.headersSent) {
        res.destroy();
        return;
      }
      let failure: DomainError;
      if (responded || isParseError(error)) {
        failure = new UpstreamError(`Agent server sent a broken answer: ${error.message}`);
      } else {
        // Unreachable: the container may have gone or moved; the next request looks it up again.
        options.targets.forget(sandboxId);
        const available = await options.engineAvailable(sandboxId).catch(() => true);
        if (res.destroyed || res.headersSent) return;
        failure = available ? new UpstreamError(`Agent server unreachable: ${error.message}`) : engineAway(sandboxId);
      }
      const { status, body, headers: errorHeaders } = domainErrorAnswer(failure);
      res.writeHead(status, { ...errorHeaders, 'content-type': 'application/json', [REQUEST_ID_HEADER]: requestId });
      res.end(JSON.stringify(body));
      answered(status);
    }
    // A client that goes away takes its upstream request with it (a long command, a stream).
    res.once('close', () => {
      if (!res.writableFinished) outgoing.destroy();
    });
    if (hasBody(req)) req.pipe(outgoing);
    else outgoing.end();
    return true;
  };
}

/** The request's URL as the app sees it: the `Host` header's name, the path normalised. */
function parseRequestUrl(req: IncomingMessage): URL | null {
  if (req.headers.host === undefined) return null;
  try {
    return new URL(req.url ?? '/', `http://${req.headers.host}`);
  } catch {
    return null;
  }
}

function upstreamHeaders(req: IncomingMessage, sessionApiKey: string): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (const name in req.headers) if (!REQUEST_HEADERS_DROPPED.has(name)) headers[name] = req.headers[name];
  // Piped unchanged, the body keeps its length.
  if (req.headers['content-length'] !== undefined) headers['content-length'] = req.headers['content-length'];
  headers[SESSION_KEY_HEADER_LOWER] = sessionApiKey;
  return headers;
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Node's HTTP parser refused what the upstream sent (its codes start with HPE_): it answered, but not in HTTP. */
function isParseError(error: Error): boolean {
  return (error as NodeJS.ErrnoException).code?.startsWith('HPE_') === true;
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
