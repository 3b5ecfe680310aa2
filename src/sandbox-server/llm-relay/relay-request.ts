/**
 * How the LLM relay turns an agent's call into the provider's, as pure functions. The agent's
 * client is given `agentBaseUrl(...)`: the relay's origin with the provider's base path, so every
 * path the client builds on its base_url (…/chat/completions, …/responses, Anthropic's /v1/messages
 * after it drops a trailing /v1, Azure's /openai/deployments/…?api-version=, Ollama's /api/chat)
 * arrives here as the very path (and query) the provider is sent. Only the key changes: the agent
 * presents its relay token where its dialect puts a key, and the provider gets the real key there.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/** Where a dialect carries its key: a header (Authorization as a bearer, or the key itself) or Google's `key` query parameter. */
export type KeyPlace = { header: 'authorization' | 'x-api-key' | 'api-key' | 'x-goog-api-key' } | { query: 'key' };

const KEY_HEADERS = ['authorization', 'x-api-key', 'api-key', 'x-goog-api-key'] as const;

/** Ends of the LLM endpoints the agent's dialects call; the relay sends nothing else on with a key. */
const LLM_ENDPOINTS = ['/chat/completions', '/responses', '/messages', '/api/chat'];

/** Headers that describe one connection, not the request (RFC 9110 §7.6.1), and the host, which is the provider's. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

/** The base_url the agent gets for a provider at `upstream`: the relay's origin, the provider's path. */
export function agentBaseUrl(relayOrigin: string, upstream: string): string {
  const { pathname } = new URL(upstream);
  return `${relayOrigin.replace(/\/+$/, '')}${pathname.replace(/\/+$/, '')}`;
}

/** The token the agent presented and where, from the first place a dialect puts a key; null when none. */
export function presentedToken(headers: IncomingHttpHeaders, url: URL): { token: string; place: KeyPlace } | null {
  for (const header of KEY_HEADERS) {
    const value = headers[header];
    if (typeof value !== 'string' || value === '') continue;
    if (header !== 'authorization') return { token: value, place: { header } };
    const bearer = /^Bearer\s+(\S+)$/i.exec(value);
    if (bearer?.[1]) return { token: bearer[1], place: { header } };
  }
  const key = url.searchParams.get('key');
  return key ? { token: key, place: { query: 'key' } } : null;
}

/**
 * The provider's URL for a call to the relay at `pathAndQuery`, or null when the path is not one of
 * an LLM endpoint under the provider's base path: the real key goes to the calls the agent's
 * client makes, never to the provider's other APIs (files, fine-tuning, key management).
 */
export function upstreamUrlFor(upstream: string, pathAndQuery: string, place: KeyPlace | null, realKey: string | null): URL | null {
  const base = new URL(upstream);
  if (!pathAndQuery.startsWith('/') || !URL.canParse(`${base.origin}${pathAndQuery}`)) return null;
  // Joined as text: a path of `//host/...` must stay a path on the provider, never name another host.
  const target = new URL(`${base.origin}${pathAndQuery}`);
  if (target.origin !== base.origin) return null;
  const prefix = base.pathname.replace(/\/+$/, '');
  const underBase = target.pathname.startsWith(`${prefix}/`);
  if (!underBase || !LLM_ENDPOINTS.some((end) => target.pathname.endsWith(end))) return null;
  if (place && 'query' in place) {
    if (realKey === null) target.searchParams.delete(place.query);
    else target.searchParams.set(place.query, realKey);
  }
  return target;
}

/** The agent's headers as the provider gets them: its token replaced by the real key (or dropped when there is none). */
export function upstreamHeaders(incoming: IncomingHttpHeaders, place: KeyPlace | null, realKey: string | null): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || HOP_BY_HOP.has(name) || (KEY_HEADERS as readonly string[]).includes(name)) continue;
    headers[name] = value;
  }
  if (realKey !== null) {
    const header = place && 'header' in place ? place.header : 'authorization';
    if (!place || 'header' in place) headers[header] = header === 'authorization' ? `Bearer ${realKey}` : realKey;
  }
  return headers;
}
