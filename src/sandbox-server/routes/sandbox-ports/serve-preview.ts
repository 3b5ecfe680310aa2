import { SESSION_KEY_HEADER_LOWER } from '../../../contracts/agent-server/session-key.js';
import type { Context } from 'hono';
import { DomainError, UnauthorizedError } from '../../../errors/index.js';
import { bridgeWebSocket } from '../../../http/bridge-websocket.js';
import { errorPage, prefersHtml } from '../../../http/error-page.js';
import { statusOf } from '../../../http/errors.js';
import { verifyPreviewToken } from '../../preview/preview-token.js';
import { forwardHttp } from '../../proxy/forward-http.js';
import { type PreviewFacts, type PreviewFactsReader, previewPortOf } from '../../services/previews/preview-ports.js';
import type { SandboxPortRouteDeps } from './deps.js';
import { previewCookie } from './preview-cookie.js';
import { previewAccessGranted, rewritePreviewHeaders } from './preview-access.js';
import { reachSandbox, sendToSandbox } from '../reach-sandbox.js';

/** The query parameter a preview link carries its token in, once: it becomes a cookie at once. */
export const PREVIEW_TOKEN_QUERY = 'preview_token';

/** One preview request: which sandbox and port (as the URL names it), the path for the app, and where its cookie lives. */
export interface PreviewRequest {
  sandboxId: string;
  /** A port number or an exposed port's name. */
  portSegment: string;
  /** What the app sees as its path (from `/`). */
  path: string;
  /** The path the preview cookie is scoped to: the sandbox port's prefix in path mode, `/` in host mode. */
  cookiePath: string;
  /** The prefix the app is served under, told to it as X-Forwarded-Prefix; empty in host mode. */
  prefix: string;
}

/**
 * Serves a preview request: checks access (an API key, the port's spec marking it public, a
 * preview token in the query, which becomes an HttpOnly cookie, or that cookie), wakes or waits
 * for the sandbox as the agent proxy does, and forwards HTTP or a WebSocket to the app on the port
 * through the sandbox's agent-server. A browser gets errors as a small page, programs as JSON.
 */
export async function servePreview(c: Context, deps: SandboxPortRouteDeps, facts: PreviewFactsReader, request: PreviewRequest): Promise<Response> {
  try {
    return await forward(c, deps, facts, request);
  } catch (error) {
    if (!(error instanceof DomainError) || !prefersHtml(c.req.header('accept'))) throw error;
    return errorPage(statusOf(error.code), previewErrorTitle(error), error.message);
  }
}

async function forward(c: Context, deps: SandboxPortRouteDeps, factsReader: PreviewFactsReader, request: PreviewRequest): Promise<Response> {
  const { sandboxId } = request;
  const facts = await factsReader.read(sandboxId);
  const previewPort = previewPortOf(facts, request.portSegment);
  const { port } = previewPort;
  const url = new URL(c.req.url);
  const queryToken = url.searchParams.get(PREVIEW_TOKEN_QUERY);
  let setCookie: string | undefined;
  if (queryToken !== null) {
    url.searchParams.delete(PREVIEW_TOKEN_QUERY);
    const expiry = tokenExpiry(facts, sandboxId, port, queryToken);
    const secure = url.protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https';
    setCookie = previewCookie(queryToken, request.cookiePath, expiry - Math.floor(Date.now() / 1000), secure);
    // A link's token goes no further than this answer: the address bar, history and the app's logs keep the URL without it.
    if (c.req.method === 'GET' || c.req.method === 'HEAD') {
      return new Response(null, { status: 303, headers: { location: `${url.pathname}${url.search}`, 'set-cookie': setCookie, 'cache-control': 'no-store' } });
    }
  } else if (!previewAccessGranted(deps.checkApiKey, facts, sandboxId, previewPort, (name) => c.req.header(name))) {
    c.header('WWW-Authenticate', 'Bearer');
    throw new UnauthorizedError(`This preview needs an API key or a preview link: ask for one with POST /api/v1/sandboxes/${sandboxId}/ports/${port}/token (sandboxctl open ${sandboxId} ${port})`);
  }

  const target = await reachSandbox(deps, sandboxId);
  const upstreamPath = `/api/ports/${port}${request.path}`;
  if (c.req.header('upgrade')?.toLowerCase() === 'websocket') {
    const socketUrl = `${target.baseUrl.replace(/^http/, 'ws')}${upstreamPath}${url.search}`;
    return deps.upgradeWebSocket(c, bridgeWebSocket(socketUrl, () => deps.recordActivity(sandboxId), { [SESSION_KEY_HEADER_LOWER]: target.sessionApiKey }));
  }
  const answer = await sendToSandbox(deps, sandboxId, () =>
    forwardHttp(c.req.raw, target, upstreamPath, url.search, (headers) =>
      rewritePreviewHeaders(headers, { host: url.host, proto: c.req.header('x-forwarded-proto') ?? url.protocol.slice(0, -1), prefix: request.prefix }),
    ),
  );
  if (setCookie) answer.headers.append('set-cookie', setCookie);
  return answer;
}

const keyOf = (facts: PreviewFacts) => ({ sessionApiKey: facts.sessionApiKey, previewKey: facts.previewKey });

/** The expiry (unix seconds) of a valid token; 401 for one that is not. */
function tokenExpiry(facts: PreviewFacts, sandboxId: string, port: number, token: string): number {
  if (!verifyPreviewToken(keyOf(facts), sandboxId, port, token)) {
    throw new UnauthorizedError('This preview link has expired or was revoked: ask for a new one (sandboxctl open SANDBOX PORT)');
  }
  return Number(token.split('.')[1]);
}

/** The title of the page a browser gets for a preview's error. */
export function previewErrorTitle(error: DomainError): string {
  switch (error.code) {
    case 'unauthorized':
      return 'This preview needs a key or a fresh link';
    case 'not_found':
      return 'No such sandbox or port';
    case 'conflict':
      return 'The sandbox is not running';
    case 'unavailable':
    case 'timeout':
      return 'The sandbox is not answering yet';
    case 'upstream':
      return 'Nothing answers on this port yet';
    default:
      return 'The preview could not be shown';
  }
}
