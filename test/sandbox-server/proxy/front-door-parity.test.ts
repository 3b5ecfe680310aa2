import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { eq } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AGENT_SERVER_PORT_NAME } from '../../../src/contracts/sandbox.js';
import { createMetrics } from '../../../src/http/metrics/index.js';
import { createSandboxServerApp } from '../../../src/sandbox-server/app.js';
import { UPSTREAM } from '../../../src/sandbox-server/proxy/forward-http.js';
import { sandboxes } from '../../../src/sandbox-server/db/schema.js';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { EventFeed } from '../../../src/sandbox-server/lifecycle-events/event-feed.js';
import { ensureDefaultSandboxSpec } from '../../../src/sandbox-server/services/sandbox-specs/default-spec.js';
import { openTestDatabase } from '../../helpers/database.js';

/**
 * The proxy's two doors, held to one behaviour: the same requests go to a server whose listener
 * tries the fast path first (as the control plane runs) and to the Hono app alone, and must get
 * the same status, body, request log line and metric labels. The fast path must really take the
 * requests it is meant for, or the comparison would prove nothing.
 */

const API_KEY = 'parity-api-key-0123456789';
const IMAGE = 'sandbox-server/agent-server:test';

interface Exchange {
  status: number;
  body: unknown;
  /** The request's log line, without what differs between any two requests (time, pid, duration). */
  line: Record<string, unknown> | undefined;
  /** The labels of the request counter that counted it. */
  counted: Record<string, string | number> | undefined;
}

interface Case {
  name: string;
  method: 'GET' | 'POST';
  /** The sandbox asked for: the running one, the one whose agent-server is down, or an unknown one. */
  sandbox: 'up' | 'down' | 'unknown';
  headers: Record<string, string>;
  body?: string;
  /** Whether the fast path answers it (the others it must leave to the app). */
  fast: boolean;
  status: number;
  /** The route label of its line and metrics: a refusal is labelled with the middleware that answered it. */
  route: string;
}

const withKey = (headers: Record<string, string> = {}) => ({ authorization: `Bearer ${API_KEY}`, ...headers });
const PROXY = '/api/v1/sandboxes/:id/agent/*';

const CASES: Case[] = [
  { name: 'a good key', method: 'GET', sandbox: 'up', headers: withKey(), fast: true, status: 200, route: PROXY },
  { name: 'a good key and a body', method: 'POST', sandbox: 'up', headers: withKey({ 'content-type': 'text/plain' }), body: 'payload', fast: true, status: 200, route: PROXY },
  { name: 'a bad key', method: 'GET', sandbox: 'up', headers: { authorization: 'Bearer not-the-key' }, fast: false, status: 401, route: '/api/*' },
  { name: 'no key', method: 'GET', sandbox: 'up', headers: {}, fast: false, status: 401, route: '/api/*' },
  { name: 'a foreign host', method: 'GET', sandbox: 'up', headers: withKey({ host: 'attacker.example' }), fast: false, status: 403, route: '/*' },
  { name: 'a browser origin', method: 'POST', sandbox: 'up', headers: withKey({ origin: 'http://evil.example' }), body: 'x', fast: false, status: 403, route: '/*' },
  { name: 'a cross-site fetch', method: 'POST', sandbox: 'up', headers: withKey({ 'sec-fetch-site': 'cross-site' }), body: 'x', fast: false, status: 403, route: '/*' },
  { name: 'an unknown sandbox', method: 'GET', sandbox: 'unknown', headers: withKey(), fast: false, status: 404, route: PROXY },
  { name: 'its agent-server down', method: 'GET', sandbox: 'down', headers: withKey(), fast: true, status: 502, route: PROXY },
];

describe('the proxy front door: fast path and app', () => {
  let handle: DatabaseHandle;
  let upstream: Server;
  let gone: Server;
  let fastServer: Server;
  let appServer: Server;
  let fastTaken = 0;
  const ids = { up: '', down: '', unknown: 'no-such-sandbox' };
  const metrics = createMetrics();
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        done();
      },
    }),
  );

  beforeAll(async () => {
    handle = await openTestDatabase('pglite');
    await ensureDefaultSandboxSpec(handle.db, IMAGE);
    // Not listening: no commit wakes it, so nothing forgets the targets the cases rely on.
    const events = new EventFeed();
    const built = createSandboxServerApp({
      db: handle.db,
      reconciler: { kick: () => undefined },
      apiKeys: [API_KEY],
      events,
      maxRunningSandboxes: 100,
      metrics,
      logger,
    });
    fastServer = createServer((req, res) => {
      if (built.fastPath(req, res)) fastTaken++;
      else built.appListener(req, res);
    });
    appServer = createServer(built.appListener);
    upstream = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, url: req.url, key: req.headers['x-session-api-key'], body }));
      });
    });
    gone = createServer((_req, res) => res.writeHead(200).end());
    const [upstreamPort, gonePort] = await Promise.all([listen(upstream), listen(gone), listen(fastServer), listen(appServer)]);
    ids.up = await runningSandbox(upstreamPort!);
    ids.down = await runningSandbox(gonePort!);

    async function runningSandbox(port: number): Promise<string> {
      const started = await built.app.request('/api/v1/sandboxes', { method: 'POST', headers: withKey() });
      const { id } = (await started.json()) as { id: string };
      await handle.db
        .update(sandboxes)
        .set({ status: 'RUNNING', hostPorts: { [AGENT_SERVER_PORT_NAME]: port }, hostAddress: '127.0.0.1', containerId: `container-${id}` })
        .where(eq(sandboxes.id, id));
      return id;
    }
  });
  afterAll(async () => {
    for (const server of [fastServer, appServer, upstream, gone]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await handle.close();
  });

  /** Sends `c` to one door and reads back what it answered, logged and counted. */
  async function exchange(server: Server, c: Case, requestId: string): Promise<Exchange> {
    const before = await counts();
    const linesBefore = lines.length;
    const answer = await send(server, `/api/v1/sandboxes/${ids[c.sandbox]}/agent/echo?x=1`, {
      method: c.method,
      headers: { 'x-request-id': requestId, ...c.headers },
      body: c.body,
    });
    const after = await counts();
    const counted = [...after].find(([key, value]) => value !== (before.get(key) ?? 0));
    const line = lines.slice(linesBefore).find((entry) => entry.msg === 'request' || entry.msg === 'request failed');
    return {
      status: answer.status,
      body: answer.contentType?.startsWith('application/json') ? JSON.parse(answer.body) : answer.body,
      line: line && withoutVolatile(line),
      counted: counted && (JSON.parse(counted[0]) as Record<string, string>),
    };
  }

  async function counts(): Promise<Map<string, number>> {
    const { values } = await metrics.httpRequests.get();
    return new Map(values.map((value) => [JSON.stringify(value.labels), value.value]));
  }

  it.each(CASES)('answers $name alike through both doors', async (c) => {
    // The fast path answers from the targets the app remembered: one request through the app first.
    const warm = await send(appServer, `/api/v1/sandboxes/${ids.up}/agent/echo`, { method: 'GET', headers: withKey() });
    expect(warm.status).toBe(200);
    if (c.sandbox === 'down') {
      expect((await send(appServer, `/api/v1/sandboxes/${ids.down}/agent/echo`, { method: 'GET', headers: withKey() })).status).toBe(200);
      const { port } = gone.address() as AddressInfo;
      gone.closeAllConnections();
      await new Promise((resolve) => gone.close(resolve));
      // Both doors then connect afresh and are refused, rather than one finding a pooled connection just cut.
      await vi.waitUntil(() => !Object.keys(UPSTREAM.freeSockets).some((name) => name.includes(`:${port}:`)));
    }

    const takenBefore = fastTaken;
    const throughFast = await exchange(fastServer, c, `parity-${c.name.replace(/\W+/g, '-')}`);
    expect(fastTaken - takenBefore).toBe(c.fast ? 1 : 0);
    const throughApp = await exchange(appServer, c, `parity-${c.name.replace(/\W+/g, '-')}`);
    expect(fastTaken - takenBefore).toBe(c.fast ? 1 : 0);

    expect(throughFast.status).toBe(c.status);
    expect(throughFast.line).toBeDefined();
    expect(throughFast.line).toMatchObject({ route: c.route, status: c.status });
    expect(throughFast.counted).toEqual({ method: c.method, route: c.route, status: String(c.status) });
    expect(throughApp).toEqual(throughFast);
    if (c.status === 200) expect(throughFast.body).toMatchObject({ method: c.method, url: '/echo?x=1', body: c.body ?? '' });
  });
});

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** A request through node:http, which, unlike fetch(), sends any Host asked for. */
function send(
  server: Server,
  path: string,
  options: { method: string; headers: Record<string, string>; body?: string },
): Promise<{ status: number; contentType: string | undefined; body: string }> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, method: options.method, headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body }));
    });
    outgoing.once('error', reject);
    outgoing.end(options.body);
  });
}

function withoutVolatile(line: Record<string, unknown>): Record<string, unknown> {
  const { time: _time, pid: _pid, hostname: _hostname, ms: _ms, ...rest } = line;
  return rest;
}
