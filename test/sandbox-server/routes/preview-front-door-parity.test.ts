import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { eq } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { createAgentServerApp, type AgentServer } from '../../../src/agent-server/app.js';
import { AGENT_SERVER_PORT_NAME } from '../../../src/contracts/sandbox.js';
import { createMetrics } from '../../../src/http/metrics/index.js';
import { serveWebSocketUpgradesOnly } from '../../../src/http/upgrade.js';
import { createSandboxServerApp, type SandboxServerApp } from '../../../src/sandbox-server/app.js';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { sandboxes, sandboxSpecs } from '../../../src/sandbox-server/db/schema.js';
import { UPSTREAM } from '../../../src/sandbox-server/proxy/forward-http.js';
import { EventFeed } from '../../../src/sandbox-server/lifecycle-events/event-feed.js';
import { PreviewTokenSchema } from '../../../src/sandbox-server/models/sandbox-port.js';
import { ensureDefaultSandboxSpec } from '../../../src/sandbox-server/services/sandbox-specs/default-spec.js';
import { openTestDatabase } from '../../helpers/database.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

/**
 * Preview URLs' two doors held to one behaviour, as front-door-parity.test.ts does for the agent
 * proxy: each request goes to a control plane whose listener tries the fast paths first and to
 * the Hono app alone, and must get the same status, body, log line and metric labels; the fast
 * path must really take the requests it is meant for. Behind both is a real agent-server (its own
 * listener, fast path included) and an app on loopback that echoes what it was sent.
 */

const API_KEY = 'preview-parity-api-key-0123456789';
const SESSION_KEY = 'preview-parity-session-key';
const IMAGE = 'sandbox-server/agent-server:test';
const PATH_ROUTE = '/api/v1/sandboxes/:id/ports/:port/*';
const HOST_ROUTE = '{port}-{sandbox_id}.{PREVIEW_DOMAIN}/*';

interface Exchange {
  status: number;
  body: unknown;
  location: string | undefined;
  line: Record<string, unknown> | undefined;
  counted: Record<string, string | number> | undefined;
}

interface Case {
  name: string;
  method: 'GET' | 'POST';
  /** The sandbox: running, its agent-server gone, or unknown. */
  sandbox?: 'up' | 'down' | 'unknown';
  /** The request's path; PORT stands for the app's port, ID for the sandbox's id. */
  path: string;
  /** host mode: the request's Host names the sandbox port under PREVIEW_DOMAIN. */
  hostMode?: boolean;
  headers?: Record<string, string>;
  /** Which credential goes with the request: the path-mode cookie, the host-mode cookie, or the API key. */
  credential?: 'key' | 'path-cookie' | 'host-cookie' | 'bad-cookie';
  body?: string;
  fast: boolean;
  status: number;
  route: string;
}

const CASES: Case[] = [
  { name: 'an API key', method: 'GET', path: '/api/v1/sandboxes/ID/ports/PORT/echo?x=1', credential: 'key', fast: true, status: 200, route: PATH_ROUTE },
  { name: 'an API key and a body', method: 'POST', path: '/api/v1/sandboxes/ID/ports/PORT/echo', credential: 'key', body: 'payload', headers: { 'content-type': 'text/plain' }, fast: true, status: 200, route: PATH_ROUTE },
  {
    name: "a browser's navigation with the preview cookie",
    method: 'GET',
    path: '/api/v1/sandboxes/ID/ports/PORT/page?y=2',
    credential: 'path-cookie',
    headers: { accept: 'text/html,application/xhtml+xml', 'sec-fetch-site': 'same-origin', cookie: 'theirs=1' },
    fast: true,
    status: 200,
    route: PATH_ROUTE,
  },
  { name: "a page's same-origin POST with the cookie", method: 'POST', path: '/api/v1/sandboxes/ID/ports/PORT/api', credential: 'path-cookie', headers: { origin: 'ORIGIN' }, body: '{}', fast: true, status: 200, route: PATH_ROUTE },
  { name: 'a public port by its name, no credential', method: 'GET', path: '/api/v1/sandboxes/ID/ports/WORKER_1/x', fast: true, status: 200, route: PATH_ROUTE },
  { name: 'no credential', method: 'GET', path: '/api/v1/sandboxes/ID/ports/PORT/x', fast: false, status: 401, route: PATH_ROUTE },
  { name: 'a forged cookie', method: 'GET', path: '/api/v1/sandboxes/ID/ports/PORT/x', credential: 'bad-cookie', fast: false, status: 401, route: PATH_ROUTE },
  { name: 'a bad key', method: 'GET', path: '/api/v1/sandboxes/ID/ports/PORT/x', headers: { authorization: 'Bearer nope' }, fast: false, status: 401, route: PATH_ROUTE },
  { name: 'a cookie for another port', method: 'GET', path: '/api/v1/sandboxes/ID/ports/1/x', credential: 'path-cookie', fast: false, status: 401, route: PATH_ROUTE },
  { name: 'a foreign host', method: 'GET', path: '/api/v1/sandboxes/ID/ports/PORT/x', credential: 'key', headers: { host: 'attacker.example' }, fast: false, status: 403, route: '/*' },
  { name: 'a cross-site POST', method: 'POST', path: '/api/v1/sandboxes/ID/ports/PORT/x', credential: 'path-cookie', headers: { origin: 'http://evil.example' }, body: 'x', fast: false, status: 403, route: '/*' },
  { name: 'an unknown port name', method: 'GET', path: '/api/v1/sandboxes/ID/ports/NOPE/x', credential: 'key', fast: false, status: 404, route: PATH_ROUTE },
  { name: 'an unknown sandbox', method: 'GET', sandbox: 'unknown', path: '/api/v1/sandboxes/ID/ports/PORT/x', credential: 'key', fast: false, status: 404, route: PATH_ROUTE },
  { name: 'the bare port path', method: 'GET', path: '/api/v1/sandboxes/ID/ports/PORT?z=1', credential: 'key', fast: false, status: 308, route: '/api/v1/sandboxes/:id/ports/:port' },
  { name: 'a POST to the bare port path', method: 'POST', path: '/api/v1/sandboxes/ID/ports/PORT', credential: 'key', body: 'b', fast: true, status: 200, route: '/api/v1/sandboxes/:id/ports/:port' },
  { name: 'the token route', method: 'POST', path: '/api/v1/sandboxes/ID/ports/PORT/token', credential: 'key', fast: false, status: 200, route: '/api/v1/sandboxes/:id/ports/:port/token' },
  { name: 'a preview link to trade', method: 'GET', path: '/api/v1/sandboxes/ID/ports/PORT/x?preview_token=TOKEN', fast: false, status: 303, route: PATH_ROUTE },
  { name: 'nothing on the port (the agent-server answers)', method: 'GET', path: '/api/v1/sandboxes/ID/ports/1/x', credential: 'key', fast: true, status: 502, route: PATH_ROUTE },
  { name: "its agent-server gone, a program", method: 'GET', sandbox: 'down', path: '/api/v1/sandboxes/ID/ports/PORT/x', credential: 'key', fast: true, status: 502, route: PATH_ROUTE },
  { name: "its agent-server gone, a browser", method: 'GET', sandbox: 'down', path: '/api/v1/sandboxes/ID/ports/PORT/x', credential: 'key', headers: { accept: 'text/html' }, fast: true, status: 502, route: PATH_ROUTE },
  { name: 'host mode with its cookie', method: 'GET', hostMode: true, path: '/at/root?q=1', credential: 'host-cookie', headers: { accept: 'text/html' }, fast: true, status: 200, route: HOST_ROUTE },
  { name: 'host mode with an API key', method: 'POST', hostMode: true, path: '/api', credential: 'key', body: 'data', fast: true, status: 200, route: HOST_ROUTE },
  { name: 'host mode with no credential', method: 'GET', hostMode: true, path: '/', fast: false, status: 401, route: HOST_ROUTE },
  { name: 'host mode with a cross-site origin (its own app judges)', method: 'POST', hostMode: true, path: '/x', credential: 'host-cookie', headers: { origin: 'http://elsewhere.example' }, body: 'x', fast: true, status: 200, route: HOST_ROUTE },
];

describe('preview URLs through both doors: fast path and app', () => {
  let handle: DatabaseHandle;
  let built: SandboxServerApp;
  let agent: AgentServer;
  let agentHttp: Server;
  let gone: Server;
  let app: Server;
  let appPort: number;
  /** Marked public in the spec, as WORKER_1. */
  let publicApp: Server;
  let gonePort: number;
  let fastServer: Server;
  let appServer: Server;
  let fastTaken = 0;
  let dataDir: string;
  const ids = { up: '', down: '', unknown: 'no-such-sandbox' };
  const cookies = { path: '', host: '', token: '' };
  const metrics = createMetrics();
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk)) as Record<string, unknown>), done()) }));

  beforeAll(async () => {
    handle = await openTestDatabase('pglite');
    await ensureDefaultSandboxSpec(handle.db, IMAGE);
    built = createSandboxServerApp({ db: handle.db, reconciler: { kick: () => undefined }, apiKeys: [API_KEY], events: new EventFeed(), maxRunningSandboxes: 100, metrics, logger, previewDomain: 'localhost' });
    fastServer = createServer((req, res) => {
      if (built.fastPath(req, res)) fastTaken++;
      else void built.appListener(req, res);
    });
    serveWebSocketUpgradesOnly(fastServer, built.injectWebSocket);
    appServer = createServer(built.appListener);
    dataDir = await makeTempDir();
    agent = await createAgentServerApp({ dataDir, sessionKeys: [SESSION_KEY] });
    agentHttp = createServer(agent.listener);
    serveWebSocketUpgradesOnly(agentHttp, agent.injectWebSocket);
    const echo = (req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const seen = ['host', 'cookie', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-prefix', 'x-session-api-key', 'authorization', 'origin'];
        res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
        res.end(JSON.stringify({ method: req.method, url: req.url, body, headers: Object.fromEntries(seen.map((name) => [name, req.headers[name] ?? null])) }));
      });
    };
    app = createServer(echo);
    publicApp = createServer(echo);
    new WebSocketServer({ server: app }).on('connection', (socket, upgrade) => socket.on('message', (data) => socket.send(`${data.toString()} at ${upgrade.url}`)));
    gone = createServer((_req, res) => res.writeHead(200).end());
    let publicPort: number;
    [appPort, publicPort, gonePort] = await Promise.all([listen(app), listen(publicApp), listen(gone), listen(agentHttp), listen(fastServer), listen(appServer)]);
    ids.down = await runningSandbox(gone);
    ids.up = await runningSandbox(agentHttp);
    const [row] = await handle.db.select({ specId: sandboxes.specId }).from(sandboxes).where(eq(sandboxes.id, ids.up));
    const [spec] = await handle.db.select({ exposedPorts: sandboxSpecs.exposedPorts }).from(sandboxSpecs).where(eq(sandboxSpecs.id, row!.specId));
    await handle.db
      .update(sandboxSpecs)
      .set({ exposedPorts: [...spec!.exposedPorts, { name: 'WORKER_1', container_port: publicPort!, public: true }] })
      .where(eq(sandboxSpecs.id, row!.specId));
    const link = await send(appServer, `/api/v1/sandboxes/${ids.up}/ports/${appPort}/token`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}` } });
    const { token } = PreviewTokenSchema.parse(JSON.parse(link.body));
    cookies.token = token;
    cookies.path = (await send(appServer, `/api/v1/sandboxes/${ids.up}/ports/${appPort}/?preview_token=${token}`, { method: 'GET', headers: {} })).setCookie!.split(';')[0]!;
    cookies.host = (await send(appServer, `/?preview_token=${token}`, { method: 'GET', headers: { host: hostModeName() } })).setCookie!.split(';')[0]!;
    await new Promise((resolve) => gone.close(resolve));

    async function runningSandbox(server: Server): Promise<string> {
      const started = await built.app.request('/api/v1/sandboxes', { method: 'POST', headers: { authorization: `Bearer ${API_KEY}` } });
      const { id } = (await started.json()) as { id: string };
      await handle.db
        .update(sandboxes)
        .set({ status: 'RUNNING', sessionApiKey: SESSION_KEY, hostPorts: { [AGENT_SERVER_PORT_NAME]: (server.address() as AddressInfo).port }, hostAddress: '127.0.0.1', containerId: `container-${id}` })
        .where(eq(sandboxes.id, id));
      return id;
    }
  });
  afterAll(async () => {
    for (const server of [fastServer, appServer, agentHttp, app, publicApp]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await agent.close();
    await handle.close();
    await removeDir(dataDir);
  });

  /** The down sandbox's agent-server answers once, so that both doors know its target, and is gone again. */
  async function rememberGoneTarget(): Promise<void> {
    const port = gonePort;
    const revived = createServer((_req, res) => res.writeHead(200).end());
    await new Promise<void>((resolve) => revived.listen(port, '127.0.0.1', resolve));
    expect((await send(appServer, `/api/v1/sandboxes/${ids.down}/ports/${appPort}/`, { method: 'GET', headers: { authorization: `Bearer ${API_KEY}` } })).status).toBe(200);
    revived.closeAllConnections();
    await new Promise((resolve) => revived.close(resolve));
    // Both doors then connect afresh and are refused, rather than one finding a pooled connection just cut.
    await vi.waitUntil(() => !Object.keys(UPSTREAM.freeSockets).some((name) => name.includes(`:${port}:`)));
  }

  const hostModeName = () => `${appPort}-${ids.up}.localhost:${(fastServer.address() as AddressInfo).port}`;

  function requestOf(c: Case, server: Server): { path: string; headers: Record<string, string> } {
    const sandboxId = ids[c.sandbox ?? 'up'];
    const path = c.path.replace('ID', sandboxId).replace('PORT', String(appPort)).replace('TOKEN', cookies.token);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(c.headers ?? {})) headers[name] = value.replace('ORIGIN', `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    // Both doors are told the same Host, so that what the app is told of it is the same too.
    headers.host ??= c.hostMode ? hostModeName() : `127.0.0.1:${(fastServer.address() as AddressInfo).port}`;
    if (headers.origin?.startsWith('http://127.0.0.1')) headers.origin = `http://${headers.host}`;
    const credential = { key: `Bearer ${API_KEY}`, 'path-cookie': cookies.path, 'host-cookie': cookies.host, 'bad-cookie': 'sandbox_preview=v1.9999999999.AAAA' };
    if (c.credential === 'key') headers.authorization = credential.key;
    else if (c.credential) headers.cookie = [headers.cookie, credential[c.credential]].filter(Boolean).join('; ');
    return { path, headers };
  }

  async function exchange(server: Server, c: Case, requestId: string): Promise<Exchange> {
    const before = await counts();
    const linesBefore = lines.length;
    const { path, headers } = requestOf(c, server);
    const answer = await send(server, path, { method: c.method, headers: { 'x-request-id': requestId, ...headers }, body: c.body });
    const after = await counts();
    const counted = [...after].find(([key, value]) => value !== (before.get(key) ?? 0));
    const line = lines.slice(linesBefore).find((entry) => entry.msg === 'request' || entry.msg === 'request failed');
    const { time: _t, pid: _p, hostname: _h, ms: _m, ...stable } = line ?? {};
    return {
      status: answer.status,
      body: answer.contentType?.startsWith('application/json') && c.name !== 'the token route' ? JSON.parse(answer.body) : c.name === 'the token route' ? 'a token' : answer.body,
      location: answer.location,
      line: line && stable,
      counted: counted && (JSON.parse(counted[0]) as Record<string, string>),
    };
  }

  async function counts(): Promise<Map<string, number>> {
    const { values } = await metrics.httpRequests.get();
    return new Map(values.map((value) => [JSON.stringify(value.labels), value.value]));
  }

  it.each(CASES)('answers $name alike through both doors', async (c) => {
    // The fast path answers from what the app remembered: the facts, the target, the app's address.
    expect((await send(appServer, `/api/v1/sandboxes/${ids.up}/ports/${appPort}/`, { method: 'GET', headers: { authorization: `Bearer ${API_KEY}` } })).status).toBe(200);
    if (c.sandbox === 'down') await rememberGoneTarget();
    const takenBefore = fastTaken;
    const throughFast = await exchange(fastServer, c, `parity-${c.name.replace(/\W+/g, '-')}`);
    expect(fastTaken - takenBefore).toBe(c.fast ? 1 : 0);
    const throughApp = await exchange(appServer, c, `parity-${c.name.replace(/\W+/g, '-')}`);

    expect(throughFast.status).toBe(c.status);
    expect(throughFast.line).toMatchObject({ route: c.route, status: c.status });
    expect(throughFast.counted).toEqual({ method: c.method, route: c.route, status: String(c.status) });
    expect(throughApp).toEqual(throughFast);
    if (c.status === 200 && c.name !== 'the token route') {
      const echoed = throughFast.body as { url: string; body: string; headers: Record<string, string | null> };
      expect(echoed.body).toBe(c.body ?? '');
      // Neither the API key, the session key nor the preview cookie reaches the app.
      expect(echoed.headers).toMatchObject({ authorization: null, 'x-session-api-key': null, 'x-forwarded-proto': 'http' });
      expect(echoed.headers.cookie ?? '').not.toContain('sandbox_preview');
      expect(echoed.headers['x-forwarded-prefix']).toBe(c.hostMode ? null : `/api/v1/sandboxes/${ids.up}/ports/${c.path.includes('WORKER_1') ? 'WORKER_1' : appPort}`);
    }
  });

  it("streams the app's answer as it comes through the fast path", async () => {
    const slow = createServer((req, res) => {
      if (req.url !== '/events') return res.writeHead(204).end();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      setTimeout(() => res.end('data: second\n\n'), 1_500);
    });
    const slowPort = await listen(slow);
    const path = `/api/v1/sandboxes/${ids.up}/ports/${slowPort}/events`;
    await send(appServer, `/api/v1/sandboxes/${ids.up}/ports/${slowPort}/`, { method: 'GET', headers: { authorization: `Bearer ${API_KEY}` } });
    const takenBefore = fastTaken;
    const first = await new Promise<{ chunk: string; at: number; ended: Promise<number> }>((resolve, reject) => {
      const startedAt = Date.now();
      request({ host: '127.0.0.1', port: (fastServer.address() as AddressInfo).port, path, headers: { authorization: `Bearer ${API_KEY}` } }, (res) => {
        const ended = new Promise<number>((done) => res.once('end', () => done(Date.now() - startedAt)).resume());
        res.once('data', (chunk: Buffer) => resolve({ chunk: chunk.toString(), at: Date.now() - startedAt, ended }));
      })
        .once('error', reject)
        .end();
    });
    expect(fastTaken - takenBefore).toBe(1);
    expect(first.chunk).toBe('data: first\n\n');
    expect(first.at).toBeLessThan(1_200);
    expect(await first.ended).toBeGreaterThanOrEqual(1_400);
    slow.closeAllConnections();
    slow.close();
  });

  it('bridges WebSocket upgrades (left to the app) on the server that runs the fast paths, in path mode and host mode', async () => {
    const port = (fastServer.address() as AddressInfo).port;
    const cases = [
      { url: `ws://127.0.0.1:${port}/api/v1/sandboxes/${ids.up}/ports/${appPort}/socket`, headers: { cookie: cookies.path, origin: `http://127.0.0.1:${port}` } },
      { url: `ws://127.0.0.1:${port}/socket`, headers: { cookie: cookies.host, host: hostModeName(), origin: `http://${hostModeName()}` } },
    ];
    for (const { url, headers } of cases) {
      const socket = new WebSocket(url, { headers });
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      const answer = new Promise<string>((resolve) => socket.once('message', (data: Buffer) => resolve(data.toString())));
      socket.send('ping');
      expect(await answer).toBe('ping at /socket');
      socket.close();
    }
  });
});

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function send(
  server: Server,
  path: string,
  options: { method: string; headers: Record<string, string>; body?: string },
): Promise<{ status: number; contentType: string | undefined; location: string | undefined; setCookie: string | undefined; body: string }> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, method: options.method, headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], location: res.headers.location, setCookie: res.headers['set-cookie']?.[0], body }),
      );
    });
    outgoing.once('error', reject);
    outgoing.end(options.body);
  });
}
