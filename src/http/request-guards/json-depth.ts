import type { Context, MiddlewareHandler } from 'hono';
import { jsonTextDepth, MAX_JSON_DEPTH } from '../../events/json.js';
import { RequestValidationError, type InputPart } from '../../errors/index.js';

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

export function jsonTooDeepError(part: InputPart, field: (string | number)[] = []): RequestValidationError {
  return new RequestValidationError([{ in: part, field, msg: `JSON must not nest deeper than ${MAX_JSON_DEPTH} levels`, type: 'json_invalid' }]);
}

/**
 * Refuses a JSON body nested deeper than MAX_JSON_DEPTH with a 422 before anything parses it:
 * JSON.parse, validation and JSON.stringify all recurse, and a few thousand levels overflow the
 * stack (a 500, or worse, a value saved that can never be read back). The text read here is
 * cached by Hono for the route's own validator.
 */
export function jsonDepthLimit(options: { skip?: (c: Context) => boolean } = {}): MiddlewareHandler {
  return async function jsonDepthLimit(c, next) {
    if (c.req.raw.body && JSON_MEDIA_TYPE.test(c.req.header('content-type') ?? '') && !options.skip?.(c)) {
      if (jsonTextDepth(await c.req.text()) > MAX_JSON_DEPTH) throw jsonTooDeepError('body');
    }
    await next();
  };
}
