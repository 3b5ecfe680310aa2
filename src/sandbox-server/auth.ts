import { hash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { UnauthorizedError } from '../errors/index.js';

export interface ApiKeyAuthOptions {
  /** Accepted keys; an empty list turns authentication off. */
  apiKeys: readonly string[];
}

/** What an `Authorization` header amounts to against the configured keys. */
export type ApiKeyVerdict = 'accepted' | 'missing' | 'invalid';

/**
 * Judges `Authorization: Bearer <key>` against the configured keys; with none, everything is
 * accepted. Keys are compared as SHA-256 digests with timingSafeEqual, and every key is compared,
 * so neither the time taken nor an early exit tells a caller how much of a guess was right or how
 * long the keys are.
 */
export function apiKeyChecker(apiKeys: readonly string[]): (authorization: string | undefined) => ApiKeyVerdict {
  const digests = apiKeys.map(digest);
  return function checkApiKey(authorization) {
    if (digests.length === 0) return 'accepted';
    const presented = bearerToken(authorization);
    if (presented === undefined) return 'missing';
    const candidate = digest(presented);
    let matched = false;
    for (const known of digests) matched = timingSafeEqual(known, candidate) || matched;
    return matched ? 'accepted' : 'invalid';
  };
}

/** Requires `Authorization: Bearer <key>` with one of the configured keys (see apiKeyChecker). */
export function apiKeyAuth(options: ApiKeyAuthOptions): MiddlewareHandler {
  const check = apiKeyChecker(options.apiKeys);
  return async function requireApiKey(c, next) {
    const verdict = check(c.req.header('authorization'));
    if (verdict === 'accepted') return next();
    c.header('WWW-Authenticate', 'Bearer');
    throw new UnauthorizedError(verdict === 'missing' ? 'Not authenticated' : 'Invalid API key');
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
