/**
 * Sends a web Request over node:http(s) and answers a web Response, bodies streamed both ways.
 *
 * Not fetch(): Node's fetch gives up when response headers take more than 300 s, and the agent
 * bash route answers only when its command ends (its default timeout is exactly 300 s). node:http
 * waits as long as the server takes; the caller's AbortSignal still ends the request.
 */
import { type Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { urlToHttpOptions } from 'node:url';

export function send(request: Request): Promise<Response> {
  return sendParts(new URL(request.url), {
    method: request.method,
    headers: Object.fromEntries(request.headers),
    body: request.body,
    signal: request.signal,
  });
}

/** A request in parts, for callers that have them at hand: no web Request is built. */
export interface RequestParts {
  method: string;
  headers: Record<string, string | string[]>;
  body: ReadableStream<Uint8Array> | null;
  signal?: AbortSignal;
  /** Pools connections (plain http only); without one each request opens its own. */
  agent?: Agent;
  /** Resolves the host instead of the system resolver (e.g. to pin the connection to checked addresses). */
  lookup?: LookupFunction;
}

/** A plain-http destination already in the parts node:http takes, for callers that send to it often: no URL is parsed. */
export interface HttpAddress {
  host: string;
  port: number;
  /** The path and query. */
  path: string;
}

export function sendParts(to: URL | HttpAddress, parts: RequestParts): Promise<Response> {
  const https = to instanceof URL && to.protocol === 'https:';
  const requestFn = https ? httpsRequest : httpRequest;
  const address = to instanceof URL ? urlToHttpOptions(to) : to;
  return new Promise((resolve, reject) => {
    const outgoing = requestFn(
      {
        ...address,
        method: parts.method,
        headers: parts.headers,
        signal: parts.signal,
        ...(parts.agent && !https ? { agent: parts.agent } : {}),
        ...(parts.lookup ? { lookup: parts.lookup } : {}),
      },
      (incoming) => resolve(toResponse(incoming, parts.method)),
    );
    outgoing.once('error', reject);
    if (parts.body === null) {
      outgoing.end();
      return;
    }
    pipeline(Readable.fromWeb(parts.body as NodeReadableStream<Uint8Array>), outgoing).catch(reject);
  });
}

function toResponse(incoming: IncomingMessage, method: string): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const status = incoming.statusCode ?? 502;
  const bodiless = method === 'HEAD' || status === 204 || status === 304;
  if (bodiless) incoming.resume();
  const body = bodiless ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>);
  return new Response(body, { status, statusText: incoming.statusMessage, headers });
}
