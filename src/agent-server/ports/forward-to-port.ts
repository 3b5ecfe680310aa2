import { SESSION_KEY_HEADER_LOWER } from '../../contracts/agent-server/session-key.js';
import { Agent } from 'node:http';
import { HOP_REQUEST_HEADERS, HOP_RESPONSE_HEADERS } from '../../http/hop-headers.js';
import { sendParts } from '../../http/send.js';
import type { LoopbackAddress } from './listening-address.js';

/** The agent-server's own session key is for it alone: the app in the sandbox (the agent's code) never sees it. */
export const REQUEST_HEADERS_DROPPED: ReadonlySet<string> = new Set<string>([...HOP_REQUEST_HEADERS, SESSION_KEY_HEADER_LOWER]);

/** Connections to apps in the sandbox are reused, as the control plane reuses its own to us. */
export const TO_APPS = new Agent({ keepAlive: true, timeout: 60_000 });

/**
 * Sends `request` on to the app listening on `address`:`port` in this sandbox, at `pathAndQuery`,
 * bodies streamed both ways. `Host` is the agent-server's address as the control plane reached it;
 * the control plane's X-Forwarded-Host, -Proto and -Prefix tell the app what the browser used.
 * Rejects when the app cannot be reached.
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
  for (const name of HOP_RESPONSE_HEADERS) answer.headers.delete(name);
  return answer;
}
