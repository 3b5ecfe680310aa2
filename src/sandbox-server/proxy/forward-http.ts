import { Agent } from 'node:http';
import { SESSION_KEY_HEADER_LOWER } from '../../contracts/agent-server/session-key.js';
import { UpstreamError } from '../../errors/index.js';
import { HOP_REQUEST_HEADERS, HOP_RESPONSE_HEADERS } from '../../http/hop-headers.js';
import { sendParts } from '../../http/send.js';
import type { AgentServerTarget } from '../agent-client.js';

// Besides the hop's own headers: `authorization` carries the control plane's own credential, which
// must never reach a sandbox. The browser's `origin` and `sec-fetch-*` were judged by the control
// plane; the hop to the agent-server is ours.
export const REQUEST_HEADERS_DROPPED = new Set([
  ...HOP_REQUEST_HEADERS,
  'host',
  'authorization',
  SESSION_KEY_HEADER_LOWER,
  'origin',
  'sec-fetch-site',
  'sec-fetch-mode',
  'sec-fetch-dest',
  'sec-fetch-user',
]);


/**
 * Upstream connections are kept open and reused: a new TCP connection per request cost more than
 * the rest of the proxy together. Idle ones close a second before the agent-server's announced
 * keep-alive timeout (Node reads its `Keep-Alive: timeout=` hint, bounded by `timeout`), so a reused
 * connection is not one the server is closing. `timeout` only reports an idle active request, it
 * never ends one, so long commands are unaffected.
 */
export const UPSTREAM = new Agent({ keepAlive: true, timeout: 60_000 });

/**
 * Sends `request` on to `{host}:{port}{path}{search}` with the sandbox's session key and streams the
 * answer back: neither body is buffered, so large downloads and NDJSON exports pass through. It
 * goes over node:http rather than fetch(), which gives up on answers slower than 300 s (a long
 * command on the bash route), and hands node:http the parts directly: building a web Request and
 * Headers per hop cost more than the hop.
 */
export async function forwardHttp(
  request: Request,
  target: AgentServerTarget,
  path: string,
  search: string,
  /** Changes the headers that go on (a preview's forwarded headers), after the dropped ones are gone. */
  rewriteHeaders?: (headers: Record<string, string>) => void,
): Promise<Response> {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    if (!REQUEST_HEADERS_DROPPED.has(name)) headers[name] = value;
  });
  rewriteHeaders?.(headers);
  headers[SESSION_KEY_HEADER_LOWER] = target.sessionApiKey;
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD' && request.body !== null;
  let upstream: Response;
  try {
    upstream = await sendParts({ host: target.host, port: target.port, path: `${path}${search}` }, {
      method: request.method,
      headers,
      body: hasBody ? request.body : null,
      signal: request.signal,
      agent: UPSTREAM,
    });
  } catch (err) {
    throw new UpstreamError(`Agent server unreachable: ${(err as Error).message}`);
  }
  for (const name of HOP_RESPONSE_HEADERS) upstream.headers.delete(name);
  return upstream;
}
