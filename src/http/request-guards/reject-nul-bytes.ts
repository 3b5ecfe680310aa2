import type { Context, MiddlewareHandler } from 'hono';
import { RequestValidationError, type InvalidValue } from '../../errors/index.js';

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;
const MSG = 'Must not contain NUL bytes';

/**
 * Refuses a NUL byte in the path, any query value, or any string (key or value) of a JSON body,
 * with a 422 that locates it. PostgreSQL cannot store NUL in text or jsonb, so for a service over
 * it such input can only fail later, as a 500. Runs after `jsonDepthLimit`, which bounds the walk.
 */
export function rejectNulBytes(options: { skip?: (c: Context) => boolean } = {}): MiddlewareHandler {
  return async function rejectNulBytes(c, next) {
    if (options.skip?.(c)) return next();
    const url = new URL(c.req.url);
    const items: InvalidValue[] = [];
    if (/%00/.test(url.pathname)) items.push({ in: 'path', field: [], msg: MSG, type: 'value_error' });
    for (const [name, value] of url.searchParams) {
      if (name.includes('\0') || value.includes('\0')) items.push({ in: 'query', field: [name], msg: MSG, type: 'value_error' });
    }
    if (c.req.raw.body && JSON_MEDIA_TYPE.test(c.req.header('content-type') ?? '')) {
      const text = await c.req.text();
      // Only a parsable body that holds an escaped NUL is walked; the route reports other problems.
      if (text.includes('\\u0000')) {
        const body = parseOrUndefined(text);
        if (body !== undefined) collectNul(body, [], items);
      }
    }
    if (items.length > 0) throw new RequestValidationError(items);
    await next();
  };
}


function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function collectNul(value: unknown, field: (string | number)[], items: InvalidValue[]): void {
  if (typeof value === 'string') {
    if (value.includes('\0')) items.push({ in: 'body', field, msg: MSG, type: 'value_error' });
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => collectNul(item, [...field, index], items));
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\0')) items.push({ in: 'body', field: [...field, key], msg: MSG, type: 'value_error' });
    collectNul(item, [...field, key], items);
  }
}
