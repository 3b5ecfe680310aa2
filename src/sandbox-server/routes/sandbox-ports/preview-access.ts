import type { OutgoingHttpHeaders } from 'node:http';
import type { ApiKeyVerdict } from '../../auth.js';
import { verifyPreviewToken } from '../../preview/preview-token.js';
import type { PreviewFacts, PreviewPort } from '../../services/previews/preview-ports.js';
import { previewCookieValues, withoutPreviewCookie } from './preview-cookie.js';

/**
 * Whether a request without a token in its query may reach `port` of the sandbox: the spec marks
 * the port public, or the request carries an API key, or a preview cookie for this sandbox port.
 * servePreview and the preview fast path both decide by it.
 */
export function previewAccessGranted(
  checkApiKey: (authorization: string | undefined) => ApiKeyVerdict,
  facts: PreviewFacts,
  sandboxId: string,
  port: PreviewPort,
  header: (name: string) => string | undefined,
): boolean {
  if (port.public || checkApiKey(header('authorization')) === 'accepted') return true;
  const key = { sessionApiKey: facts.sessionApiKey, previewKey: facts.previewKey };
  return previewCookieValues(header('cookie')).some((token) => verifyPreviewToken(key, sandboxId, port.port, token));
}

/** What a preview tells the app of the browser's request: the host and scheme it used, and the prefix it is served under (path mode). */
export interface Forwarded {
  host: string;
  proto: string;
  /** Empty in host mode. */
  prefix: string;
}

/**
 * The headers going to the app, changed for a preview (after the hop's own are gone): the preview
 * cookie is kept from it (the app in the sandbox never sees a token), and X-Forwarded-Host, -Proto
 * and -Prefix say what the browser used.
 */
export function rewritePreviewHeaders(headers: OutgoingHttpHeaders, forwarded: Forwarded): void {
  const { cookie } = headers;
  if (typeof cookie === 'string') {
    const theirs = withoutPreviewCookie(cookie);
    if (theirs) headers.cookie = theirs;
    else delete headers.cookie;
  }
  headers['x-forwarded-host'] = forwarded.host;
  headers['x-forwarded-proto'] = forwarded.proto;
  if (forwarded.prefix) headers['x-forwarded-prefix'] = forwarded.prefix;
}
