import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/http/metrics/index.js';
import { browserSteps } from '../../../src/http/browser-guard/index.js';
import { apiKeyStep } from '../../../src/sandbox-server/auth.js';
import { createProxyFastPath } from '../../../src/sandbox-server/proxy/fast-path.js';
import { agentServerTarget } from '../../../src/sandbox-server/agent-client.js';
import { TargetCache } from '../../../src/sandbox-server/proxy/target-cache.js';

const API_KEY = 'fast-path-api-key-0123456789';
const SESSION_KEY = 'sandbox-session-key';
const SANDBOX = 'sb-fast';

/** Stands in for an agent-server: echoes what it received; /stream sends one line, then waits. */
function startUpstream() {
  const seen: IncomingMessage[] = [];
  let release = () => {};
  const server = createServer((req, res) => {
    seen.push(req);
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first\n');
      release = () => res.end('second\n');
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
    });
  });
  return listen(server).then((port) => ({ server, port, seen, release: () => release() }));
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

describe('proxy fast path', () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let proxy: Server;
  let base: string;
  let engineUp = true;
  const targets = new TargetCache();
  const activity: string[] = [];
  const metrics = createMetrics();
  const logLines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _encoding, done) {
        logLines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        done();
      },
    }),
  );

  beforeAll(async () => {
    upstream = await startUpstream();
    const serveFast = createProxyFastPath({
      admission: [...browserSteps({ allowedHosts: [], corsOrigins: [] }), apiKeyStep({ user: [API_KEY], admin: [] })],
      targets,
      recordActivity: (id) => activity.push(id),
      engineAvailable: async () => engineUp,
      metrics,
      logger,
    });
    // What the fast path leaves alone, the app would answer: here a 418 says it was left.
    proxy = createServer((req, res) => {
      if (serveFast(req, res)) return;
      req.resume();
      res.writeHead(418).end('left to the app');
    });
    base = `http://127.0.0.1:${await listen(proxy)}/api/v1/sandboxes/${SANDBOX}/agent`;
  });
  afterEach(() => {
    targets.forget();
    targets.remember(SANDBOX, agentServerTarget('127.0.0.1', upstream.port, SESSION_KEY), targets.mark());
    engineUp = true;
    activity.length = 0;
    logLines.length = 0;
    upstream.seen.length = 0;
  });
  afterAll(async () => {
    await new Promise((resolve) => proxy.close(resolve));
    await new Promise((resolve) => upstream.server.close(resolve));
  });

  const remembered = () =>
    targets.remember(SANDBOX, agentServerTarget('127.0.0.1', upstream.port, SESSION_KEY), targets.mark());
  const withKey = (headers: Record<string, string> = {}) => ({ authorization: `Bearer ${API_KEY}`, ...headers });

  it('forwards method, path, query, body and headers to a remembered target, swapping our key for the session key', async () => {
    remembered();
    const res = await fetch(`${base}/api/things/a%20b?x=1&y=two`, {
      method: 'POST',
      headers: withKey({ 'x-custom': 'kept', 'content-type': 'text/plain', 'x-request-id': 'client-7' }),
      body: 'payload',
    });
    expect([res.status, res.headers.get('x-upstream'), res.headers.get('x-request-id')]).toEqual([201, 'yes', 'client-7']);
    const echoed = (await res.json()) as { method: string; url: string; headers: Record<string, string>; body: string };
    expect(echoed).toMatchObject({ method: 'POST', url: '/api/things/a%20b?x=1&y=two', body: 'payload' });
    expect(echoed.headers).toMatchObject({ 'x-session-api-key': SESSION_KEY, 'x-custom': 'kept', 'content-length': '7' });
    expect(echoed.headers.authorization).toBeUndefined();
    expect(activity).toEqual([SANDBOX]);
    expect(logLines).toEqual([
      expect.objectContaining({ msg: 'request', request_id: 'client-7', method: 'POST', route: '/api/v1/sandboxes/:id/agent/*', status: 201 }),
    ]);
    const counted = (await metrics.httpRequests.get()).values.find((value) => value.labels.route === '/api/v1/sandboxes/:id/agent/*');
    expect(counted).toMatchObject({ labels: { method: 'POST', status: '201' }, value: 1 });
  });

  it('streams the answer without waiting for its end', async () => {
    remembered();
    const res = await fetch(`${base}/stream`, { headers: withKey() });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('first\n');
    upstream.release();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
    expect(rest).toBe('second\n');
  });

  it.each([
    ['no API key', {}],
    ['a wrong API key', { authorization: 'Bearer not-the-key' }],
    ['a browser Origin', withKey({ origin: 'http://evil.example' })],
    ['a cross-site fetch', withKey({ 'sec-fetch-site': 'cross-site' })],
    ['a WebSocket upgrade', withKey({ upgrade: 'websocket', connection: 'upgrade' })],
  ])('leaves a request with %s to the app, never forwarding it', async (_case, headers: Record<string, string>) => {
    remembered();
    expect(await get(`${base}/alive`, headers)).toEqual({ status: 418, body: 'left to the app' });
    expect(upstream.seen).toHaveLength(0);
    expect(activity).toHaveLength(0);
  });

  it('leaves a sandbox whose target is not remembered, an unlisted host and an escaped id to the app', async () => {
    targets.forget();
    expect((await fetch(`${base}/alive`, { headers: withKey() })).status).toBe(418);
    remembered();
    const escaped = base.replace(`/${SANDBOX}/`, `/${encodeURIComponent(`${SANDBOX}\0`)}/`);
    expect((await fetch(`${escaped}/alive`, { headers: withKey() })).status).toBe(418);
    expect((await get(`${base}/alive`, { host: 'attacker.example', ...withKey() })).status).toBe(418);
    expect(upstream.seen).toHaveLength(0);
  });

  it('answers 502 when the agent-server cannot be reached and forgets the target; 503 with Retry-After while the engine is away', async () => {
    targets.remember(SANDBOX, agentServerTarget('127.0.0.1', 1, SESSION_KEY), targets.mark());
    const unreachable = await fetch(`${base}/alive`, { headers: withKey() });
    expect(unreachable.status).toBe(502);
    expect(((await unreachable.json()) as { detail: string }).detail).toMatch(/^Agent server unreachable/);
    expect(targets.get(SANDBOX)).toBeUndefined();
    expect(logLines).toEqual([expect.objectContaining({ msg: 'request failed', status: 502 })]);

    engineUp = false;
    targets.remember(SANDBOX, agentServerTarget('127.0.0.1', 1, SESSION_KEY), targets.mark());
    const away = await fetch(`${base}/alive`, { headers: withKey() });
    expect([away.status, away.headers.get('retry-after')]).toEqual([503, '5']);
    expect(((await away.json()) as { detail: string }).detail).toMatch(/container engine is unavailable/);
  });

  it.each([
    ['a head that is not HTTP', 'NOT HTTP AT ALL\r\n\r\n'],
    ['an invalid Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n'],
    ['a broken chunk before any body byte', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nhello\r\n'],
    ['a close before the promised body', 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n'],
  ])('answers 502 with a JSON detail when the agent-server sends %s', async (_case, answer: string) => {
    const broken = await startBrokenUpstream(answer);
    try {
      targets.remember(SANDBOX, agentServerTarget('127.0.0.1', broken.port, SESSION_KEY), targets.mark());
      const res = await fetch(`${base}/alive`, { headers: withKey({ 'x-request-id': 'broken-1' }) });
      expect([res.status, res.headers.get('content-type'), res.headers.get('x-request-id')]).toEqual([502, 'application/json', 'broken-1']);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/^Agent server (sent a broken answer|unreachable)/);
      expect(logLines).toEqual([expect.objectContaining({ msg: 'request failed', request_id: 'broken-1', status: 502 })]);
    } finally {
      await new Promise((resolve) => broken.server.close(resolve));
    }
  });

  it('cuts the client off when the answer breaks after its first body bytes went out', async () => {
    const broken = await startBrokenUpstream('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello');
    try {
      targets.remember(SANDBOX, agentServerTarget('127.0.0.1', broken.port, SESSION_KEY), targets.mark());
      const res = await fetch(`${base}/alive`, { headers: withKey() });
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow();
    } finally {
      await new Promise((resolve) => broken.server.close(resolve));
    }
  });
});

/** An upstream that answers any request with the given raw bytes, then closes the connection. */
async function startBrokenUpstream(answer: string) {
  const server = createTcpServer((socket) => {
    socket.once('data', () => socket.end(answer));
    socket.on('error', () => {});
  });
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  return { server, port };
}

/** A GET through node:http, which, unlike fetch(), sends any Host and Upgrade header asked for. */
function get(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .once('error', reject)
      .end();
  });
}
