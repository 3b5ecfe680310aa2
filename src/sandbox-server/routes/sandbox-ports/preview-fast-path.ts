import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { performance } from 'node:perf_hooks';
import { SESSION_KEY_HEADER_LOWER } from '../../../contracts/agent-server/session-key.js';
import { type DomainError, UpstreamError } from '../../../errors/index.js';
import { firstRefusal, type AdmissionStep } from '../../../http/admission.js';
import { ERROR_PAGE_HEADERS, errorPageHtml, prefersHtml } from '../../../http/error-page.js';
import { domainErrorAnswer } from '../../../http/errors.js';
import { observeRequest, type Metrics } from '../../../http/metrics/index.js';
import { arrivalOf, firstValue, requestUrlOf } from '../../../http/node-arrival.js';
import { pipeRequest, requestHeadersWithout, type WrittenAnswer } from '../../../http/pipe-request.js';
import { REQUEST_ID_HEADER, requestIdFrom, writeRequestLine } from '../../../http/request-log/index.js';
import { logger as rootLogger, type Logger } from '../../../logger.js';
import { PREVIEW_HOST_ROUTE, previewAddressOf } from '../../preview/preview-host.js';
import { engineAway } from '../../proxy/engine-away.js';
import { REQUEST_HEADERS_DROPPED, UPSTREAM } from '../../proxy/forward-http.js';
import { type PreviewFactsReader, type PreviewPort, previewPortOf } from '../../services/previews/preview-ports.js';
import type { SandboxPortRouteDeps } from './deps.js';
import { previewAccessGranted, rewritePreviewHeaders } from './preview-access.js';
import { previewErrorTitle, PREVIEW_TOKEN_QUERY } from './serve-preview.js';

const PATH_MODE_PREFIX = '/api/v1/sandboxes/';
/** Path mode as the router reads it (the port as SandboxPortParamsSchema takes it), then the app's path, if any. */
const PATH_MODE = /^\/api\/v1\/sandboxes\/([^/%]{1,128})\/ports\/(\d{1,5}|[A-Z][A-Z0-9_]{0,63})(\/.*)?$/;
/** The routes and middleware that serve these requests in the app, as requests answered here are labelled. */
const ROUTES = { pathMode: '/api/v1/sandboxes/:id/ports/:port/*', pathModeBare: '/api/v1/sandboxes/:id/ports/:port', hostMode: PREVIEW_HOST_ROUTE };
const TOKEN_ROUTE_TAIL = '/token';

export interface PreviewFastPathOptions {
  /** The browser guard's steps, which path mode passes in the app (host mode's traffic is its app's, unchecked). */
  admission: readonly AdmissionStep[];
  /** With CORS origins the app adds CORS headers to path mode's answers, which this does not: path mode is then left to the app. */
  corsOrigins: boolean;
  metrics: Metrics;
  logger?: Logger;
}

/** One preview request as both modes give it. */
interface Arrived {
  sandboxId: string;
  portSegment: string;
  /** What the app sees as its path (from `/`). */
  path: string;
  prefix: string;
  route: string;
}

/**
 * The common case of preview traffic answered on node:http before the Hono app, as the agent
 * proxy's fast path does: a request that passes the app's checks by the same functions (the
 * browser guard's in path mode; access by previewAccessGranted: an API key, the preview cookie or
 * a public port), to a sandbox whose preview facts and agent-server target are in memory, and no
 * WebSocket. Everything else is left to the app, answering false and touching nothing: a token to
 * trade for a cookie, a refusal, a sandbox to look up, resume or wait for, a bare path-mode GET
 * (redirected to its slash). Its answers get the app's log line, metrics and error answers (a page
 * for a browser). test/sandbox-server/routes/preview-front-door-parity.test.ts holds the two doors
 * to the same answers.
 */
export function createPreviewFastPath(
  deps: SandboxPortRouteDeps,
  facts: PreviewFactsReader,
  options: PreviewFastPathOptions,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const log = options.logger ?? rootLogger;
  return function servePreviewFast(req, res) {
    const { headers } = req;
    const hostMode = previewAddressOf(headers.host, deps.previewDomain);
    if (!hostMode && (options.corsOrigins || !req.url?.startsWith(PATH_MODE_PREFIX))) return false;
    if (headers.upgrade !== undefined) return false;
    const url = requestUrlOf(req);
    if (!url || url.searchParams.has(PREVIEW_TOKEN_QUERY)) return false;
    const method = req.method ?? 'GET';
    let arrived: Arrived;
    if (hostMode) {
      arrived = { sandboxId: hostMode.sandboxId, portSegment: String(hostMode.port), path: url.pathname, prefix: '', route: ROUTES.hostMode };
    } else {
      const match = PATH_MODE.exec(url.pathname);
      if (!match) return false;
      const [, sandboxId, portSegment, rest] = match as unknown as [string, string, string, string | undefined];
      // A bare GET is redirected to its slash; the token route is the API's own.
      if (rest === undefined && (method === 'GET' || method === 'HEAD')) return false;
      if (rest === TOKEN_ROUTE_TAIL && method === 'POST') return false;
      if (firstRefusal(options.admission, arrivalOf(req, url)) !== undefined) return false;
      const prefix = `${PATH_MODE_PREFIX}${sandboxId}/ports/${portSegment}`;
      arrived = { sandboxId, portSegment, path: rest ?? '/', prefix, route: rest === undefined ? ROUTES.pathModeBare : ROUTES.pathMode };
    }
    const { sandboxId } = arrived;
    const known = facts.known(sandboxId);
    const port = known && portOf(known, arrived.portSegment);
    if (!known || !port || !previewAccessGranted(deps.checkApiKey, known, sandboxId, port, (name) => firstValue(headers[name]))) return false;
    const target = deps.targets.get(sandboxId);
    if (!target) return false;
    deps.recordActivity(sandboxId);

    const startedAt = performance.now();
    const requestId = requestIdFrom(firstValue(headers[REQUEST_ID_HEADER]));
    const upstreamHeaders = requestHeadersWithout(req, REQUEST_HEADERS_DROPPED);
    const scheme = (req.socket as TLSSocket).encrypted ? 'https' : 'http';
    rewritePreviewHeaders(upstreamHeaders, { host: url.host, proto: firstValue(headers['x-forwarded-proto']) ?? scheme, prefix: arrived.prefix });
    upstreamHeaders[SESSION_KEY_HEADER_LOWER] = target.sessionApiKey;
    pipeRequest(req, res, {
      host: target.host,
      port: target.port,
      path: `/api/ports/${port.port}${arrived.path}${url.search}`,
      headers: upstreamHeaders,
      agent: UPSTREAM,
      answerHeaders: { [REQUEST_ID_HEADER]: requestId },
      answered(status) {
        // Preview traffic passes no API key check in the app, so its path is logged as an unauthenticated one.
        const request = { requestId, method, route: arrived.route, path: url.pathname, authenticated: false, status, startedAt };
        writeRequestLine(log, request);
        observeRequest(options.metrics, request);
      },
      async failure(error, reached) {
        let failure: DomainError;
        if (reached) {
          failure = new UpstreamError(`Agent server sent a broken answer: ${error.message}`);
        } else {
          // Unreachable: the container may have gone or moved; the next request looks it up again.
          deps.targets.forget(sandboxId);
          const available = await deps.engineAvailable(sandboxId).catch(() => true);
          failure = available ? new UpstreamError(`Agent server unreachable: ${error.message}`) : engineAway(sandboxId);
        }
        return failureAnswer(failure, firstValue(headers.accept), requestId);
      },
    });
    return true;
  };
}

/** The port a segment names, or undefined where the app answers 404. */
function portOf(known: Parameters<typeof previewPortOf>[0], segment: string): PreviewPort | undefined {
  try {
    return previewPortOf(known, segment);
  } catch {
    return undefined;
  }
}

/** servePreview's error answer: a page for a browser, else the error's JSON body. */
function failureAnswer(failure: DomainError, accept: string | undefined, requestId: string): WrittenAnswer {
  const { status, body, headers } = domainErrorAnswer(failure);
  if (prefersHtml(accept)) {
    return { status, headers: { ...ERROR_PAGE_HEADERS, [REQUEST_ID_HEADER]: requestId }, body: errorPageHtml(status, previewErrorTitle(failure), failure.message) };
  }
  return { status, headers: { ...headers, 'content-type': 'application/json', [REQUEST_ID_HEADER]: requestId }, body: JSON.stringify(body) };
}
