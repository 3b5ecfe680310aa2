import { OpenAPIHono } from '@hono/zod-openapi';
import type { Env } from 'hono';
import { handleError, handleNotFound, validationHook } from './errors.js';

/**
 * A Hono app whose route schemas validate requests (422 on failure), whose errors all pass through
 * `handleError`, and whose routes are described in its OpenAPI document.
 */
export function createApiApp<E extends Env = Env>(): OpenAPIHono<E> {
  const app = new OpenAPIHono<E>({ defaultHook: validationHook });
  app.onError(handleError);
  app.notFound(handleNotFound);
  return app;
}
