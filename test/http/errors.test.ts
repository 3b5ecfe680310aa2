import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { NotFoundError, UnavailableError } from '../../src/errors/index.js';
import { handleError } from '../../src/http/errors.js';

function appThrowing(error: Error): Hono {
  const app = new Hono();
  app.get('/', () => {
    throw error;
  });
  app.onError(handleError);
  return app;
}

describe('handleError', () => {
  it('answers a DomainError a library wrapped (as drizzle wraps its driver errors) by its code', async () => {
    const wrapped = new Error('Failed query: select 1\nparams: ', { cause: new UnavailableError('database away', 1) });
    const response = await appThrowing(wrapped).request('/');
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toEqual({ detail: 'database away' });
  });

  it('answers a DomainError thrown as is, and anything else as a 500 without its message: driver errors are the database client\'s to classify', async () => {
    expect((await appThrowing(new NotFoundError('Sandbox not found')).request('/')).status).toBe(404);
    const response = await appThrowing(new Error('Failed query', { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) })).request('/');
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ detail: 'Internal Server Error' });
  });
});
