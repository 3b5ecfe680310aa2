import type { IncomingMessage } from 'node:http';
import type { Arrival } from './admission.js';

/**
 * The request's URL as the Hono apps see it (@hono/node-server builds it the same way): the `Host`
 * header's name, the path normalised; null without a Host the adapter would take, which the app
 * then refuses.
 */
export function requestUrlOf(req: IncomingMessage): URL | null {
  const { host } = req.headers;
  if (host === undefined) return null;
  try {
    const url = new URL(req.url ?? '/', `http://${host}`);
    return url.hostname.length === host.length || url.hostname === host.replace(/:\d+$/, '') ? url : null;
  } catch {
    return null;
  }
}

/** A node:http request as admission steps read it. */
export function arrivalOf(req: IncomingMessage, url: URL): Arrival {
  const { headers } = req;
  return { method: req.method ?? 'GET', url, header: (name) => firstValue(headers[name]) };
}

/** A header's first value, as Hono's `c.req.header` reads it. */
export function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
