import { SESSION_KEY_HEADER_LOWER } from '../../contracts/agent-server/session-key.js';
import { Agent } from 'node:http';
import { sendParts } from '../../http/send.js';
import type { LoopbackAddress } from './listening-address.js';

/**
 * Headers that describe the hop, not the message (RFC 9110 7.6.1), and the agent-server's own
 * session key, which the app in the sandbox (the agent's code) must never see.
 */
const REQUEST_HEADERS_DROPPED = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  SESSION_KEY_HEADER_LOWER,
]);
const RESPONSE_HEADERS_DROPPED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'content-length']);

/** Connections to apps in the sandbox are reused, as the control plane reuses its own to us. */
const TO_APPS = new Agent({ keepAlive: true, timeout: 60_000 });

/**
 * Sends `request` on to the app listening on `address`:`port` in this sandbox, at `pathAndQuery`,
 * bodies streamed both ways. `Host` is kept: the app sees the name the browser used, as behind any
 * reverse proxy. Rejects when the app cannot be reached.
 */
export async function forwardToPort(request: Request, address: LoopbackAddress, port: number, pathAndQuery: string): Promise<Response> {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    if (!REQUEST_HEADERS_DROPPED.has(name)) headers[name] = value;
  });
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD' && request.body !== null;
  const answer = await sendParts(
    { host: address, port, path: pathAndQuery },
    { method: request.method, headers, body: hasBody ? request.body : null, signal: request.signal, agent: TO_APPS },
  );
  for (const name of RESPONSE_HEADERS_DROPPED) answer.headers.delete(name);
  return answer;
}
