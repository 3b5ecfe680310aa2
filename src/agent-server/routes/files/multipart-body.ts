import type { MiddlewareHandler } from 'hono';
import { RequestValidationError } from '../../../errors/index.js';

const MULTIPART_MEDIA_TYPE = /^multipart\/form-data\s*;/i;

/**
 * For routes that take a multipart form: a request without one lacks the form's fields, which
 * FastAPI reports as a 422 on `body.file` rather than the 415 the route validator would give.
 */
export const requireMultipartBody: MiddlewareHandler = async (c, next) => {
  if (!MULTIPART_MEDIA_TYPE.test(c.req.header('content-type') ?? '')) {
    throw new RequestValidationError([{ in: 'body', field: ['file'], msg: 'Field required', type: 'missing' }]);
  }
  await next();
};
