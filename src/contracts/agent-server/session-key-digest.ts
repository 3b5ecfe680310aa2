import { createHash } from 'node:crypto';

/**
 * How the control plane gives a sandbox's agent-server its session key: only the key's SHA-256,
 * in this environment variable of the container. The key itself never enters the container, so
 * nothing the agent runs there can find it; a digest of a 256-bit random key opens nothing.
 */
export const SESSION_KEY_DIGEST_ENV = 'SESSION_API_KEY_SHA256';

/**
 * The SHA-256 of the key's UTF-8 bytes: what the agent-server compares a presented key by. One
 * definition for both sides, so the digest the control plane sets is the one the server computes.
 */
export function sessionKeyDigestBytes(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** The digest in lower-case hex, as SESSION_API_KEY_SHA256 holds it. */
export function sessionKeyDigest(key: string): string {
  return sessionKeyDigestBytes(key).toString('hex');
}
