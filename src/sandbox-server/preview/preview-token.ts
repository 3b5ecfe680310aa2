import { createHmac } from 'node:crypto';
import { digestMatchesAny } from '../../contracts/digest-match.js';

/**
 * A preview token: a signed, expiring pass to one port of one sandbox, for a person's browser that
 * holds no API key. It is `v1.<expiry, unix seconds>.<HMAC-SHA256>` over the sandbox, the port and
 * the expiry, keyed by the sandbox's session key and its preview key: a new session key (a
 * restart from ERROR) or a new preview key (revocation) ends every token given before.
 */
export interface PreviewTokenKey {
  sessionApiKey: string;
  /** null until the sandbox's tokens were first revoked. */
  previewKey: string | null;
}

const VERSION = 'v1';

export function signPreviewToken(key: PreviewTokenKey, sandboxId: string, port: number, expiresAt: Date): string {
  const expiry = Math.floor(expiresAt.getTime() / 1000);
  return `${VERSION}.${expiry}.${mac(key, sandboxId, port, expiry).toString('base64url')}`;
}

/** Whether `token` was signed with `key` for this sandbox and port and has not expired at `now`. */
export function verifyPreviewToken(key: PreviewTokenKey, sandboxId: string, port: number, token: string, now = new Date()): boolean {
  const [version, expiryText, signature, extra] = token.split('.');
  if (version !== VERSION || extra !== undefined || !expiryText || !signature || !/^\d{1,12}$/.test(expiryText)) return false;
  const expiry = Number(expiryText);
  if (expiry * 1000 <= now.getTime()) return false;
  const expected = mac(key, sandboxId, port, expiry);
  const presented = Buffer.from(signature, 'base64url');
  return presented.length === expected.length && digestMatchesAny([expected], presented);
}

function mac(key: PreviewTokenKey, sandboxId: string, port: number, expiry: number): Buffer {
  return createHmac('sha256', `preview\n${key.previewKey ?? ''}\n${key.sessionApiKey}`).update(`${sandboxId}\n${port}\n${expiry}`).digest();
}
