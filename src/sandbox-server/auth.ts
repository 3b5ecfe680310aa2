import { hash } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { digestMatches } from '../contracts/digest-match.js';
import { ForbiddenError, UnauthorizedError } from '../errors/index.js';
import type { AdmissionStep } from '../http/admission.js';

/**
 * What a key may do. `user` keys (SANDBOX_SERVER_API_KEYS) work with sandboxes, specs, snapshots,
 * conversations, events and webhooks to public addresses; `admin` keys (SANDBOX_SERVER_ADMIN_KEYS)
 * may also register, change, drain and remove engines and point webhooks at the private addresses
 * WEBHOOK_ALLOWED_HOSTS names.
 */
export type Role = 'user' | 'admin';

/** Who is calling, as far as the control plane tells callers apart. */
export interface Caller {
  role: Role;
  /** Names the key (never derived from it: `user#2`, `admin#1`), or `keyless`, for per-key limits and logs. */
  keyId: string;
}

export interface ApiKeys {
  /** Ordinary keys. */
  user: readonly string[];
  /** Keys that may also administer the fleet. */
  admin: readonly string[];
}

/**
 * Without any key the control plane listens on loopback only (config.ts refuses anything else),
 * and every caller is the operator on this machine: keyless mode is the single-user mode, and it
 * administers the fleet as the operator would. Keys are what separate callers.
 */
export const KEYLESS_CALLER: Caller = { role: 'admin', keyId: 'keyless' };

declare module 'hono' {
  interface ContextVariableMap {
    caller: Caller;
  }
}

/** What an `Authorization` header amounts to against the configured keys. */
export type ApiKeyVerdict = 'accepted' | 'missing' | 'invalid';

/** How many distinct accepted `Authorization` headers are remembered: a few keys, each spelled a few ways. */
const MAX_REMEMBERED_HEADERS = 256;

/**
 * Judges `Authorization: Bearer <key>` against the configured keys; with none, every caller is
 * KEYLESS_CALLER. Keys are compared as SHA-256 digests by digestMatches, which compares every key,
 * so neither the time taken nor an early exit tells a caller how much of a guess was right, how
 * long the keys are, or which list a key is in. A key in both lists is an admin key.
 *
 * Headers found to carry a key are remembered, so that a client's every request (the proxy's
 * above all) costs a map lookup rather than a digest. Keys are fixed for the process's life, so a
 * remembered verdict never goes stale. Only accepted headers are kept: guesses cannot fill it, and
 * a guess is looked up by V8's seeded string hash, which compares contents only with an entry of
 * the same hash, then goes through the digests as before.
 */
export function apiKeyIdentifier(keys: ApiKeys): (authorization: string | undefined) => Caller | 'missing' | 'invalid' {
  const known = [
    ...keys.user.map((key, index) => ({ digest: digest(key), caller: { role: 'user' as const, keyId: `user#${index + 1}` } })),
    ...keys.admin.map((key, index) => ({ digest: digest(key), caller: { role: 'admin' as const, keyId: `admin#${index + 1}` } })),
  ];
  const digests = known.map((key) => key.digest);
  const accepted = new Map<string, Caller>();
  return function identify(authorization) {
    if (known.length === 0) return KEYLESS_CALLER;
    if (authorization === undefined) return 'missing';
    const remembered = accepted.get(authorization);
    if (remembered) return remembered;
    const presented = bearerToken(authorization);
    if (presented === undefined) return 'missing';
    const matches = digestMatches(digests, digest(presented));
    let found: Caller | undefined;
    for (const [index, key] of known.entries()) {
      if (matches[index] && found?.role !== 'admin') found = key.caller;
    }
    if (!found) return 'invalid';
    if (accepted.size < MAX_REMEMBERED_HEADERS) accepted.set(authorization, found);
    return found;
  };
}

/** Whether a header carries any configured key (see apiKeyIdentifier). */
export function apiKeyChecker(keys: ApiKeys): (authorization: string | undefined) => ApiKeyVerdict {
  const identify = apiKeyIdentifier(keys);
  return function checkApiKey(authorization) {
    const caller = identify(authorization);
    return typeof caller === 'string' ? caller : 'accepted';
  };
}

/** apiKeyAuth's check as an admission step (the proxy's fast path runs it): the same refusal, no caller kept. */
export function apiKeyStep(keys: ApiKeys): AdmissionStep {
  const check = apiKeyChecker(keys);
  return ({ header }) => {
    const verdict = check(header('authorization'));
    return verdict === 'accepted' ? undefined : keyRefusal(verdict);
  };
}

function keyRefusal(verdict: 'missing' | 'invalid'): UnauthorizedError {
  return new UnauthorizedError(verdict === 'missing' ? 'Not authenticated' : 'Invalid API key');
}

/** Requires `Authorization: Bearer <key>` with one of the configured keys, and sets `caller`. */
export function apiKeyAuth(keys: ApiKeys): MiddlewareHandler {
  const identify = apiKeyIdentifier(keys);
  return async function requireApiKey(c, next) {
    const caller = identify(c.req.header('authorization'));
    if (typeof caller !== 'string') {
      c.set('caller', caller);
      // Keyless, the control plane listens on loopback only, where only the operator reaches it.
      c.set('authenticated', true);
      return next();
    }
    c.header('WWW-Authenticate', 'Bearer');
    throw keyRefusal(caller);
  };
}

/** The caller apiKeyAuth identified; a request it did not see (none under /api) gets the least rights. */
export function callerOf(c: Context): Caller {
  return c.get('caller') ?? { role: 'user', keyId: 'unidentified' };
}

/** Lets only admin keys make requests of these methods (403 for others); `what` says what they were refused. */
export function requireAdmin(what: string, methods: readonly string[]): MiddlewareHandler {
  return async function adminOnly(c, next) {
    if (methods.includes(c.req.method) && callerOf(c).role !== 'admin') throw new ForbiddenError(`${what} needs an admin key (SANDBOX_SERVER_ADMIN_KEYS)`);
    return next();
  };
}

function bearerToken(header: string | undefined): string | undefined {
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1];
}

/** One-shot: half the cost of a Hash object per request, on the proxy's every request. */
function digest(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}
