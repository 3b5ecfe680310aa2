/**
 * Inputs that used to end in a 500 on the control plane (issue 15), on every database it runs on:
 * NUL bytes, numbers its columns cannot hold, dates PostgreSQL cannot store, deep and large bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { testDrivers } from '../../helpers/database.js';
import { API_KEY, openTestApp, type TestApp } from '../harness.js';

const nul = (loc: (string | number)[]) => ({ detail: [{ loc, msg: 'Must not contain NUL bytes', type: 'value_error' }] });

describe.each(testDrivers)('hostile input on %s', (driver) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp(driver);
  });
  afterAll(() => t.close());

  it.each([
    ['GET', '/api/v1/sandboxes?id=%00', ['query', 'id']],
    ['GET', '/api/v1/sandbox-specs?id=a%00b', ['query', 'id']],
    ['DELETE', '/api/v1/sandbox-specs/a%00b', ['path']],
    ['POST', '/api/v1/sandboxes/a%00b/pause', ['path']],
    ['GET', '/api/v1/sandboxes/search?page_id=%00', ['query', 'page_id']],
    ['GET', '/api/v1/app-conversations/search?title__contains=x%00', ['query', 'title__contains']],
    ['GET', '/api/v1/sandboxes/a%00/agent/alive', ['path', 'id']],
  ])('%s %s with a NUL byte is a 422', async (method, path, loc) => {
    const response = await t.call(method, path, undefined, ValidationErrorSchema);
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({ loc, msg: 'Must not contain NUL bytes' });
  });

  it('refuses a NUL byte in a JSON string or key, naming where it is', async () => {
    const response = await t.call('POST', '/api/v1/sandbox-specs', { image: 'x:1', initial_env: { TOKEN: 'a\u0000b' } });
    expect(response).toEqual({ status: 422, body: nul(['body', 'initial_env', 'TOKEN']) });
  });

  it.each(['memory_mb', 'pids_limit', 'idle_pause_seconds', 'ttl_seconds'])('refuses %s above 2^31-1', async (field) => {
    const response = await t.call('POST', '/api/v1/sandbox-specs', { image: 'x:1', [field]: 2 ** 31 }, ValidationErrorSchema);
    expect(response.status).toBe(422);
    expect(response.body.detail[0]?.loc).toEqual(['body', field]);
    const largest = await t.call('POST', '/api/v1/sandbox-specs', { id: `largest-${field}`, image: 'x:1', [field]: 2 ** 31 - 1 });
    expect(largest.status).toBe(201);
  });

  it('refuses a CPU share too small to store', async () => {
    const response = await t.call('POST', '/api/v1/sandbox-specs', { image: 'x:1', cpus: 1e-320 });
    expect(response.status).toBe(422);
  });

  it.each(['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '+275760-09-13T00:00:00Z'])('refuses created_at__gte=%s', async (date) => {
    const response = await t.call('GET', `/api/v1/app-conversations/search?created_at__gte=${encodeURIComponent(date)}`, undefined, ValidationErrorSchema);
    expect(response.status).toBe(422);
    expect(response.body.detail[0]?.loc).toEqual(['query', 'created_at__gte']);
    expect((await t.call('GET', '/api/v1/app-conversations/count?created_at__gte=0001-01-01T00:00:00Z')).status).toBe(200);
  });

  it('refuses JSON nested thousands deep with a 422', async () => {
    const response = await t.app.request('/api/v1/sandbox-specs', {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: `{"image":"x:1","command":${'['.repeat(5000)}${']'.repeat(5000)}}`,
    });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ detail: [{ loc: ['body'], msg: 'JSON must not nest deeper than 100 levels', type: 'json_invalid' }] });
  });

  it('answers 413 for a body over MAX_REQUEST_BODY_MB', async () => {
    const small = await openTestApp(driver, { maxRequestBodyBytes: 1024 });
    const response = await small.app.request('/api/v1/sandbox-specs', {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ image: 'x:1', initial_env: { BIG: 'x'.repeat(2000) } }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ detail: 'Request body is larger than 1024 bytes' });
    await small.close();
  });
});
