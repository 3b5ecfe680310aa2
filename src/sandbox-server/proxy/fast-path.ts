import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { SESSION_KEY_HEADER_LOWER } from '../../contracts/agent-server/session-key.js';
import { type DomainError, UpstreamError } from '../../errors/index.js';
import { firstRefusal, type AdmissionStep } from '../../http/admission.js';
import { domainErrorAnswer } from '../../http/errors.js';
import { arrivalOf, firstValue, requestUrlOf } from '../../http/node-arrival.js';
import { pipeRequest, requestHeadersWithout } from '../../http/pipe-request.js';
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
    const url = requestUrlOf(req);
    const match = url && PROXY_PATH.exec(url.pathname);
    // An escaped id is left to the router, which decodes it before validating.
    if (!url || !match || match[1]!.includes('%')) return false;
    const sandboxId = match[1]!;
    const arrival = arrivalOf(req, url);
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
    const upstreamHeaders = requestHeadersWithout(req, REQUEST_HEADERS_DROPPED);
    upstreamHeaders[SESSION_KEY_HEADER_LOWER] = target.sessionApiKey;
    pipeRequest(req, res, {
      host: target.host,
      port: target.port,
      path: `${match[2]}${url.search}`,
      headers: upstreamHeaders,
      agent: UPSTREAM,
      answerHeaders: { [REQUEST_ID_HEADER]: requestId },
      answered,
      async failure(error, reached) {
        let failure: DomainError;
        if (reached) {
          failure = new UpstreamError(`Agent server sent a broken answer: ${error.message}`);
        } else {
          // Unreachable: the container may have gone or moved; the next request looks it up again.
          options.targets.forget(sandboxId);
          const available = await options.engineAvailable(sandboxId).catch(() => true);
          failure = available ? new UpstreamError(`Agent server unreachable: ${error.message}`) : engineAway(sandboxId);
        }
        const { status, body, headers: errorHeaders } = domainErrorAnswer(failure);
        return { status, headers: { ...errorHeaders, 'content-type': 'application/json', [REQUEST_ID_HEADER]: requestId }, body: JSON.stringify(body) };
      },
    });
    return true;
  };
}
