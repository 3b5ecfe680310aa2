import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { UnauthorizedError } from '../errors/index.js';

export interface ApiKeyAuthOptions {
  /** Accepted keys; an empty list turns authentication off. */
  apiKeys: readonly string[];
}

/**
 * Requires `Authorization: Bearer <key>` with one of the configured keys. Keys are compared as
 * SHA-256 digests with timingSafeEqual, and every key is compared, so neither the time taken nor
 * an early exit tells a caller how much of a guess was right or how long the keys are.
 */
export function apiKeyAuth(options: ApiKeyAuthOptions): MiddlewareHandler {
  const digests = options.apiKeys.map(digest);
  return async function requireApiKey(c, next) {
    if (digests.length === 0) return next();
    const presented = bearerToken(c.req.header('authorization'));
    if (presented === undefined) {
      c.header('WWW-Authenticate', 'Bearer');
      throw new UnauthorizedError('Not authenticated');
    }
    const candidate = digest(presented);
    let matched = false;
    for (const known of digests) matched = timingSafeEqual(known, candidate) || matched;
    if (!matched) {
      c.header('WWW-Authenticate', 'Bearer');
      throw new UnauthorizedError('Invalid API key');
    }
    return next();
  };
}

function bearerToken(header: string | undefined): string | undefined {
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1];
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}
