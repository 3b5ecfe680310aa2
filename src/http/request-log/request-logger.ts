import { performance } from 'node:perf_hooks';
import { createMiddleware } from 'hono/factory';
import { logger as rootLogger, type Logger } from '../../logger.js';
import { routeLabel } from '../route-label.js';
import { loggedPath } from './logged-path.js';
import { REQUEST_ID_HEADER, requestIdFrom } from './request-id.js';

export interface RequestLogVariables {
  /** The request's id, also sent back in the `x-request-id` response header. */
  requestId: string;
  /** A child of the app's logger: every line it writes carries `request_id`. */
  logger: Logger;
  /** Set by the server's key check when the request presented a valid key: its path is then logged whole. */
  authenticated: boolean;
}

declare module 'hono' {
  interface ContextVariableMap extends RequestLogVariables {}
}

export interface RequestLoggerOptions {
  /** Parent of the per-request loggers; the process logger by default. */
  logger?: Logger;
}

/**
 * Gives each request an id and a logger carrying it, and writes one line when the request ends:
 * method, route pattern, path (cut short without a valid key: logged-path.ts), status and duration. Headers, the query string and bodies are never
 * logged: they carry API keys (`Authorization`, the session-key header and query parameter) and
 * conversation content.
 */
export function requestLogger(options: RequestLoggerOptions = {}) {
  const parent = options.logger ?? rootLogger;
  return createMiddleware<{ Variables: RequestLogVariables }>(async function requestLogger(c, next) {
    const startedAt = performance.now();
    const requestId = requestIdFrom(c.req.header(REQUEST_ID_HEADER));
    const log = parent.child({ request_id: requestId });
    c.set('requestId', requestId);
    c.set('logger', log);
    // Errors never escape next(): Hono hands them to app.onError, which sets the response.
    await next();
    // Set after the handler so it also lands on responses the handler built itself (the proxy's).
    c.header(REQUEST_ID_HEADER, requestId);
    writeRequestLine(log, { method: c.req.method, route: routeLabel(c), path: c.req.path, authenticated: c.get('authenticated') === true, status: c.res.status, startedAt });
  });
}

/**
 * The one line a request gets when it is answered (an error line from 500 on), for every server
 * that answers one: the Hono apps through requestLogger, the proxy's fast path directly. The
 * request id comes from `log`'s bindings, or, from a caller that spares a child logger per
 * request, as `requestId`.
 */
export function writeRequestLine(
  log: Logger,
  request: { requestId?: string; method: string; route: string; path: string; authenticated: boolean; status: number; startedAt: number },
): void {
  const line = {
    ...(request.requestId === undefined ? {} : { request_id: request.requestId }),
    method: request.method,
    route: request.route,
    ...loggedPath(request.path, request.authenticated),
    status: request.status,
    ms: Math.round((performance.now() - request.startedAt) * 10) / 10,
  };
  if (request.status >= 500) log.error(line, 'request failed');
  else log.info(line, 'request');
}
