import type { MiddlewareHandler } from 'hono';
import { SESSION_KEY_HEADER, SESSION_KEY_HEADER_LOWER } from '../contracts/agent-server/session-key.js';
import { digestMatchesAny } from '../contracts/digest-match.js';
import { sessionKeyDigestBytes } from '../contracts/agent-server/session-key-digest.js';
import { UnauthorizedError } from '../errors/index.js';
import type { AdmissionStep } from '../http/admission.js';

/**
 * Paths every caller may reach, as on OpenHands' agent-server: health checks and server details
 * (container probes and clients run them before they hold a key), and the API description.
 */
const OPEN_PATHS = new Set(['/', '/alive', '/health', '/ready', '/server_info', '/openapi.json', '/docs']);
const OPEN_PREFIXES = ['/docs/assets/', '/sockets/'];

/** Whether every caller may reach `path` without a session key. */
export function isOpenPath(path: string): boolean {
  return OPEN_PATHS.has(path) || OPEN_PREFIXES.some((prefix) => path.startsWith(prefix));
}

/** A CORS preflight carries no credentials by definition; refusing it would hide the real answer. */
function isCorsPreflight(method: string, header: (name: string) => string | undefined): boolean {
  return method === 'OPTIONS' && header('access-control-request-method') !== undefined;
}

/**
 * What the server keeps of its accepted session keys: their SHA-256 digests only, whether it was
 * given the keys (OH_SESSION_API_KEYS_*, SESSION_API_KEY) or, as in a sandbox, just their digests.
 */
export type SessionKeyDigests = readonly Buffer[];

/** `keys` in plain text and `hexDigests` (64 hex digits each) as one list of digests. */
export function sessionKeyDigestsOf(keys: readonly string[], hexDigests: readonly string[] = []): SessionKeyDigests {
  return [...keys.map(sessionKeyDigestBytes), ...hexDigests.map((hex) => Buffer.from(hex, 'hex'))];
}

/**
 * True when `candidate`'s digest is one of `accepted`, or when none is (authentication is off).
 * Comparing digests takes the same time whatever the key's length, and every digest is compared so
 * timing does not tell which one matched.
 */
export function isValidSessionKey(accepted: SessionKeyDigests, candidate: string | undefined | null): boolean {
  if (accepted.length === 0) return true;
  if (typeof candidate !== 'string') return false;
  return digestMatchesAny(accepted, sessionKeyDigestBytes(candidate));
}

/** How many distinct valid keys the fast path remembers: a sandbox has one or two. */
const MAX_REMEMBERED_KEYS = 16;

/**
 * requireSessionKey's check of a path that is not open, as an admission step (the ports' fast path
 * runs it): the same refusal. Keys found valid are remembered (they are fixed for the process's
 * life), so that each request costs a lookup rather than a digest; only valid ones are kept, and a
 * guess is compared by content only with an entry of the same seeded hash, then digested as before.
 */
export function sessionKeyStep(accepted: SessionKeyDigests): AdmissionStep {
  const valid = new Set<string>();
  return ({ header }) => {
    const presented = header(SESSION_KEY_HEADER_LOWER);
    if (presented !== undefined && valid.has(presented)) return undefined;
    if (!isValidSessionKey(accepted, presented)) return missingKey();
    if (presented !== undefined && valid.size < MAX_REMEMBERED_KEYS) valid.add(presented);
    return undefined;
  };
}

function missingKey(): UnauthorizedError {
  return new UnauthorizedError(`Invalid or missing ${SESSION_KEY_HEADER}`);
}

/**
 * Requires the session-key header on every route but the open ones when keys are accepted.
 * WebSocket paths (/sockets/...) carry their key in the query or their first frame instead and
 * check it themselves, as browsers cannot set headers on a WebSocket.
 */
export function requireSessionKey(accepted: SessionKeyDigests): MiddlewareHandler {
  return async (c, next) => {
    const open = isOpenPath(c.req.path) || isCorsPreflight(c.req.method, (name) => c.req.header(name));
    const presented = c.req.header(SESSION_KEY_HEADER);
    if (!open && !isValidSessionKey(accepted, presented)) {
      throw missingKey();
    }
    // Without keys every request passes, the agent's own included: none of them is authenticated.
    if (accepted.length > 0 && presented !== undefined && isValidSessionKey(accepted, presented)) c.set('authenticated', true);
    await next();
  };
}
