import type { Context, MiddlewareHandler } from 'hono';
import { RequestBodyTooLargeError } from '../../errors/index.js';

export interface BodyLimitOptions {
  maxBytes: number;
  /** Requests left alone, e.g. proxied ones whose upstream applies its own limit. */
  skip?: (c: Context) => boolean;
}

/**
 * Refuses a request body larger than `maxBytes` with a 413 `{"detail": "..."}`. A declared
 * Content-Length is checked before anything is read; a chunked body is counted as the route reads
 * it, so a route that streams its body (imports, uploads) never holds more than it consumes. Unlike
 * hono/body-limit, nothing is buffered here.
 */
export function bodyLimit(options: BodyLimitOptions): MiddlewareHandler {
  const { maxBytes } = options;
  return async function bodyLimit(c, next) {
    const body = c.req.raw.body;
    if (!body || options.skip?.(c)) return next();
    const declared = c.req.header('content-length');
    if (declared !== undefined && c.req.header('transfer-encoding') === undefined) {
      if (Number(declared) > maxBytes) throw new RequestBodyTooLargeError(maxBytes);
      return next();
    }
    let size = 0;
    let exceeded = false;
    const counted = body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          size += chunk.byteLength;
          if (size > maxBytes) {
            exceeded = true;
            controller.error(new RequestBodyTooLargeError(maxBytes));
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    c.req.raw = new Request(c.req.raw, { body: counted, duplex: 'half' } as RequestInit);
    await next();
    // The route saw its body fail part way and may have answered anything (a JSON parse error is a
    // 422): the real reason is the size.
    if (exceeded) {
      c.res = undefined;
      c.res = c.json({ detail: new RequestBodyTooLargeError(maxBytes).message }, 413);
    }
  };
}
