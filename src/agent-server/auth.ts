import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { UnauthorizedError } from '../errors/index.js';

export const SESSION_KEY_HEADER = 'X-Session-API-Key';

/**
 * Paths every caller may reach, as on OpenHands' agent-server: health checks and server details
 * (container probes and clients run them before they hold a key), and the API description.
 */
const OPEN_PATHS = new Set(['/', '/alive', '/health', '/ready', '/server_info', '/openapi.json', '/docs']);
const OPEN_PREFIXES = ['/docs/assets/', '/sockets/'];

/** A CORS preflight carries no credentials by definition; refusing it would hide the real answer. */
function isCorsPreflight(method: string, header: (name: string) => string | undefined): boolean {
  return method === 'OPTIONS' && header('access-control-request-method') !== undefined;
}

/**
 * True when `candidate` is one of `keys`, or when no key is configured (authentication is off).
 * Both sides are hashed first so the comparison takes the same time whatever the lengths, and every
 * key is compared so timing does not tell which one matched.
 */
export function isValidSessionKey(keys: readonly string[], candidate: string | undefined | null): boolean {
  if (keys.length === 0) return true;
  if (typeof candidate !== 'string') return false;
  const digest = sha256(candidate);
  let valid = false;
  for (const key of keys) {
    if (timingSafeEqual(sha256(key), digest)) valid = true;
  }
  return valid;
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * Requires the X-Session-API-Key header on every route but the open ones when keys are configured.
 * WebSocket paths (/sockets/...) carry their key in the query or their first frame instead and
 * check it themselves, as browsers cannot set headers on a WebSocket.
 */
export function requireSessionKey(keys: readonly string[]): MiddlewareHandler {
  return async (c, next) => {
    const path = c.req.path;
    const open =
      OPEN_PATHS.has(path) ||
      OPEN_PREFIXES.some((prefix) => path.startsWith(prefix)) ||
      isCorsPreflight(c.req.method, (name) => c.req.header(name));
    if (!open && !isValidSessionKey(keys, c.req.header(SESSION_KEY_HEADER))) {
      throw new UnauthorizedError('Invalid or missing X-Session-API-Key');
    }
    await next();
  };
}
