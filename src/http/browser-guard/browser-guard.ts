import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { SESSION_KEY_HEADER } from '../../contracts/agent-server/session-key.js';
import { ForbiddenError } from '../../errors/index.js';
import { firstRefusal, type AdmissionStep } from '../admission.js';
import { isAllowedHost } from './allowed-hosts.js';

export interface BrowserGuardOptions {
  /** Host names served besides loopback names and addresses (ALLOWED_HOSTS). */
  allowedHosts: readonly string[];
  /** Origins whose pages may call the API (CORS_ORIGINS); empty keeps CORS closed. */
  corsOrigins: readonly string[];
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Keeps web pages the operator happens to open from driving the server, with or without keys:
 * - a `Host` that is neither loopback nor listed is refused (DNS rebinding);
 * - a state-changing request (any method but GET, HEAD, OPTIONS, and every WebSocket upgrade) that
 *   a browser marks as coming from another site is refused (CSRF): `Sec-Fetch-Site: cross-site`,
 *   or an `Origin` that is neither this server's own nor listed in CORS_ORIGINS.
 * Programs (OpenHands clients, curl, sandboxctl) send no Origin and pass unchanged.
 */
export function browserGuard(options: BrowserGuardOptions): MiddlewareHandler[] {
  const steps = browserSteps(options);
  const guard: MiddlewareHandler = async function refuseCrossSite(c, next) {
    const refusal = firstRefusal(steps, { method: c.req.method, url: servedUrl(c.req.url, c.req.header('host')), header: (name) => c.req.header(name) });
    if (refusal) throw refusal;
    return next();
  };
  const origins = new Set(options.corsOrigins.map(normalizeOrigin));
  if (origins.size === 0) return [guard];
  const corsHandler = cors({
    origin: [...origins],
    allowHeaders: ['Authorization', 'Content-Type', SESSION_KEY_HEADER],
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    maxAge: 600,
  });
  return [guard, corsHandler];
}

/** The guard's checks as admission steps, in order: the host, then the site a state-changing request comes from. */
export function browserSteps(options: BrowserGuardOptions): AdmissionStep[] {
  const origins = new Set(options.corsOrigins.map(normalizeOrigin));
  const allowedHost: AdmissionStep = ({ url }) =>
    isAllowedHost(url.hostname, options.allowedHosts) ? undefined : new ForbiddenError(`Host ${url.hostname} is not allowed; list it in ALLOWED_HOSTS`);
  const sameSite: AdmissionStep = ({ method, url, header }) => {
    const changesState = !SAFE_METHODS.has(method) || header('upgrade')?.toLowerCase() === 'websocket';
    if (!changesState) return undefined;
    const origin = header('origin');
    const listed = origin !== undefined && origins.has(normalizeOrigin(origin));
    if (!listed && header('sec-fetch-site')?.toLowerCase() === 'cross-site') return new ForbiddenError('Cross-site request refused');
    if (origin !== undefined && !listed && normalizeOrigin(origin) !== url.origin) {
      return new ForbiddenError(`Origin ${origin} is not allowed; list it in CORS_ORIGINS`);
    }
    return undefined;
  };
  return [allowedHost, sameSite];
}

/**
 * The URL as the client addressed it. WebSocket upgrades reach the app with a URL on a fixed
 * `http://localhost` base (@hono/node-ws), whatever the client's `Host`: judged by that, every
 * upgrade would pass the host check (DNS rebinding) and every browser's own Origin would look
 * foreign. The `Host` header is what the client sent, for upgrades and requests alike.
 */
function servedUrl(requestUrl: string, hostHeader: string | undefined): URL {
  const url = new URL(requestUrl);
  if (hostHeader) {
    try {
      url.host = hostHeader;
    } catch {
      return url;
    }
  }
  return url;
}

/** Origins compare as the URL parser writes them: lower-case scheme and host, default port dropped. */
function normalizeOrigin(origin: string): string {
  try {
    return new URL(origin).origin;
  } catch {
    return origin;
  }
}
