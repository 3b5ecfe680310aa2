import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { requestLogger, UNAUTHENTICATED_PATH_CHARS } from '../../src/http/request-log/index.js';
import { createDemoApp } from './demo-app.js';

interface LogLine {
  level: number;
  msg: string;
  request_id?: string;
  [field: string]: unknown;
}

/** An app whose request logs land in `output`, as the raw text pino wrote. */
function loggedApp() {
  const output: string[] = [];
  const logger = pino({ level: 'info' }, { write: (chunk: string) => output.push(chunk) });
  const app = createDemoApp((app) => {
    app.use('*', requestLogger({ logger }));
    app.get('/raw', (c) => new Response(`id ${c.var.requestId}`));
  });
  const lines = () => output.join('').trim().split('\n').map((line) => JSON.parse(line) as LogLine);
  return { app, output, lines };
}

describe('requestLogger', () => {
  it('gives each request a new id, in the response header and in c.var', async () => {
    const { app } = loggedApp();
    const first = await app.request('/raw');
    const second = await app.request('/raw');
    const id = first.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await first.text()).toBe(`id ${id}`);
    expect(second.headers.get('x-request-id')).not.toBe(id);
  });

  it('keeps a sane incoming x-request-id so one request can be followed across services', async () => {
    const { app, lines } = loggedApp();
    const response = await app.request('/api/v1/things/a', { headers: { 'x-request-id': 'client-42.retry:1' } });
    expect(response.headers.get('x-request-id')).toBe('client-42.retry:1');
    expect(lines().map((line) => line.request_id)).toEqual(['client-42.retry:1', 'client-42.retry:1']);
  });

  it.each([['x'.repeat(129)], ['two words'], ['{"level":60}'], ['']])('replaces the incoming id %j', async (incoming) => {
    const { app } = loggedApp();
    const response = await app.request('/raw', { headers: { 'x-request-id': incoming } });
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('puts the id on every line of the request and writes one line per request', async () => {
    const { app, lines } = loggedApp();
    const response = await app.request('/api/v1/things/a');
    const id = response.headers.get('x-request-id');

    const [handlerLine, requestLine, ...rest] = lines();
    expect(rest).toEqual([]);
    expect(handlerLine).toMatchObject({ msg: 'looked up a thing', thing_id: 'a', request_id: id });
    expect(requestLine).toMatchObject({
      level: 30,
      msg: 'request',
      request_id: id,
      method: 'GET',
      route: '/api/v1/things/:thing_id',
      path: '/api/v1/things/a',
      status: 200,
    });
    expect(requestLine?.ms).toEqual(expect.any(Number));
  });

  it('sets the id on error answers and logs server errors at error level', async () => {
    const { app, lines } = loggedApp();
    const notFound = await app.request('/api/v1/things/missing');
    const broken = await app.request('/api/v1/things/broken');
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('x-request-id')).toBeTruthy();
    expect(broken.status).toBe(500);
    expect(broken.headers.get('x-request-id')).toBeTruthy();

    const logged = lines();
    expect(logged.map(({ level, status, msg }) => ({ level, status, msg }))).toEqual([
      { level: 30, status: 404, msg: 'request' },
      { level: 50, status: undefined, msg: 'unhandled error' },
      { level: 50, status: 500, msg: 'request failed' },
    ]);
    // The error mapper logs through the request's own logger, so the failure carries its id.
    expect(logged[1]?.request_id).toBe(broken.headers.get('x-request-id'));
  });

  it('never logs credentials, the query string or bodies', async () => {
    const { app, output } = loggedApp();
    const secrets = ['Bearer sk-live-AAAA', 'sess-key-BBBB', 'query-key-CCCC', 'body-secret-DDDD'];
    await app.request('/api/v1/things/a/pause?session_api_key=query-key-CCCC', {
      method: 'POST',
      headers: {
        authorization: 'Bearer sk-live-AAAA',
        'x-session-api-key': 'sess-key-BBBB',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ api_key: 'body-secret-DDDD' }),
    });
    await app.request('/api/v1/things/broken?session_api_key=query-key-CCCC', {
      headers: { authorization: 'Bearer sk-live-AAAA', 'x-session-api-key': 'sess-key-BBBB' },
    });

    const logged = output.join('');
    expect(logged).toContain('"route":"/api/v1/things/:thing_id/pause"');
    for (const secret of secrets) expect(logged).not.toContain(secret);
    expect(logged).not.toContain('session_api_key');
  });
});

describe('requestLogger and long paths', () => {
  /** An app whose /open route passes without a key and whose /keyed route marks the request authenticated. */
  function appWithKeys() {
    const { app, lines } = loggedApp();
    app.use('/keyed/*', async (c, next) => {
      c.set('authenticated', true);
      await next();
    });
    app.get('/open/*', (c) => c.text('open'));
    app.get('/keyed/*', (c) => c.text('keyed'));
    return { app, lines };
  }

  it('cuts the path of a request without a valid key short, saying how long it was', async () => {
    const { app, lines } = appWithKeys();
    const long = `/open/${'a'.repeat(100_000)}`;
    await app.request(long);
    const [line] = lines().filter((l) => l.msg === 'request');
    expect(line).toMatchObject({ path: `${long.slice(0, UNAUTHENTICATED_PATH_CHARS)}…`, path_length: long.length });
    expect(JSON.stringify(line).length).toBeLessThan(600);
  });

  it('logs the whole path of a request with a valid key', async () => {
    const { app, lines } = appWithKeys();
    const long = `/keyed/${'b'.repeat(1000)}`;
    await app.request(long);
    const [line] = lines().filter((l) => l.msg === 'request');
    expect(line?.path).toBe(long);
    expect(line).not.toHaveProperty('path_length');
  });
});
