import type { MiddlewareHandler } from 'hono';
import { RequestValidationError } from '../../errors/index.js';

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

/**
 * For routes whose body is a JSON object: a body sent as anything but JSON is a 422 on `body`, as
 * FastAPI answers, rather than the 415 the route validator would give.
 */
export const requireJsonBody: MiddlewareHandler = async (c, next) => {
  if (!JSON_MEDIA_TYPE.test(c.req.header('content-type') ?? '')) {
    throw new RequestValidationError([
      { in: 'body', field: [], msg: 'Input should be a valid dictionary or object to extract fields from', type: 'model_attributes_type' },
    ]);
  }
  await next();
};
