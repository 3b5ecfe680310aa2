import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { createAgentServerApp, type AgentServer } from '../../src/agent-server/app.js';
import { serveWebSocketUpgradesOnly } from '../../src/http/upgrade.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';

/**
 * The agent-server's two doors to apps in the sandbox (`/api/ports/{port}/...`): the same requests
 * go to a server whose listener tries the fast path first and to the Hono app alone, and must get
 * the same status and body, and what the app sees of them must be the same; the fast path must
 * really take the requests it is meant for.
 */

const SESSION_KEY = 'ports-parity-session-key';

interface Case {
  name: string;
  method: 'GET' | 'POST';
  /** PORT stands for the app's port, GONE for a port whose app went away after it was found. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  fast: boolean;
  status: number;
}

const withKey = (headers: Record<string, string> = {}) => ({ 'x-session-api-key': SESSION_KEY, ...headers });

const CASES: Case[] = [
  { name: 'the key', method: 'GET', path: '/api/ports/PORT/echo?x=1', headers: withKey(), fast: true, status: 200 },
  { name: 'the key and a body', method: 'POST', path: '/api/ports/PORT/echo', headers: withKey({ 'content-type': 'text/plain' }), body: 'payload', fast: true, status: 200 },
  { name: 'the bare port path', method: 'GET', path: '/api/ports/PORT', headers: withKey({ cookie: 'theirs=1' }), fast: true, status: 200 },
  { name: 'no key', method: 'GET', path: '/api/ports/PORT/echo', fast: false, status: 401 },
  { name: 'a bad key', method: 'GET', path: '/api/ports/PORT/echo', headers: { 'x-session-api-key': 'nope' }, fast: false, status: 401 },
  { name: 'a port out of range', method: 'GET', path: '/api/ports/70000/x', headers: withKey(), fast: false, status: 422 },
  { name: 'a foreign host', method: 'GET', path: '/api/ports/PORT/x', headers: withKey({ host: 'attacker.example' }), fast: false, status: 403 },
  { name: 'a port nobody listens on', method: 'GET', path: '/api/ports/1/x', headers: withKey(), fast: false, status: 502 },
  { name: 'an app gone since it was found, a program', method: 'GET', path: '/api/ports/GONE/x', headers: withKey(), fast: true, status: 502 },
  { name: 'an app gone since it was found, a browser', method: 'GET', path: '/api/ports/GONE/x', headers: withKey({ accept: 'text/html' }), fast: true, status: 502 },
];

describe('the agent-server ports front door: fast path and app', () => {
  let agent: AgentServer;
  let dataDir: string;
  let fastServer: Server;
  let appServer: Server;
  let app: Server;
  let appPort: number;
  let gonePort: number;
  let fastTaken = 0;

  beforeAll(async () => {
    dataDir = await makeTempDir();
    agent = await createAgentServerApp({ dataDir, sessionKeys: [SESSION_KEY] });
    fastServer = createServer((req, res) => {
      if (agent.fastPath(req, res)) fastTaken++;
      else void agent.appListener(req, res);
    });
    serveWebSocketUpgradesOnly(fastServer, agent.injectWebSocket);
    appServer = createServer(agent.appListener);
    app = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
        const seen = ['cookie', 'x-session-api-key', 'content-type', 'host'];
        res.end(JSON.stringify({ method: req.method, url: req.url, body, headers: Object.fromEntries(seen.map((name) => [name, req.headers[name] ?? null])) }));
      });
    });
    new WebSocketServer({ server: app }).on('connection', (socket, upgrade) => socket.on('message', (data) => socket.send(`${data.toString()} at ${upgrade.url}`)));
    [appPort] = await Promise.all([listen(app), listen(fastServer), listen(appServer)]);
  });
  afterAll(async () => {
    for (const server of [fastServer, appServer, app]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await agent.close();
    await removeDir(dataDir);
  });

  /** What `exchange` got, and the labels of the request counter it moved (read from /metrics). */
  async function counted(exchange: () => ReturnType<typeof send>): Promise<Awaited<ReturnType<typeof send>> & { counted: string | undefined }> {
    const before = await requestCounts();
    const answer = await exchange();
    const after = await requestCounts();
    return { ...answer, counted: [...after].find(([labels, count]) => count !== before.get(labels))?.[0] };
  }

  async function requestCounts(): Promise<Map<string, number>> {
    const { body } = await send(appServer, '/metrics', { method: 'GET', headers: withKey() });
    const lines = body.split('\n').filter((line) => line.startsWith('http_requests_total{') && !line.includes('route="/metrics"'));
    return new Map(lines.map((line) => [line.slice(line.indexOf('{'), line.lastIndexOf('}') + 1), Number(line.slice(line.lastIndexOf(' ') + 1))]));
  }

  /** A port whose app answered once (so that both doors found its address) and is gone now. */
  async function foundThenGone(): Promise<number> {
    const brief = createServer((_req, res) => res.writeHead(204).end());
    const port = await listen(brief);
    expect((await send(appServer, `/api/ports/${port}/`, { method: 'GET', headers: withKey() })).status).toBe(204);
    brief.closeAllConnections();
    await new Promise((resolve) => brief.close(resolve));
    return port;
  }

  it.each(CASES)('answers $name alike through both doors', async (c) => {
    // The fast path takes ports the app found: one request through the app first.
    expect((await send(appServer, `/api/ports/${appPort}/`, { method: 'GET', headers: withKey() })).status).toBe(200);
    if (c.path.includes('GONE')) gonePort = await foundThenGone();
    const path = c.path.replace('PORT', String(appPort)).replace('GONE', String(gonePort));
    // Both doors are told the same Host, so that the app is told the same one too.
    const headers = { host: `127.0.0.1:${(fastServer.address() as AddressInfo).port}`, ...c.headers };
    const takenBefore = fastTaken;
    const throughFast = await counted(() => send(fastServer, path, { method: c.method, headers, body: c.body }));
    expect(fastTaken - takenBefore).toBe(c.fast ? 1 : 0);
    const throughApp = await counted(() => send(appServer, path, { method: c.method, headers, body: c.body }));

    expect(throughFast.status).toBe(c.status);
    expect(throughFast.counted).toContain(`status="${c.status}"`);
    expect(throughApp).toEqual(throughFast);
    if (c.status === 200) {
      const echoed = JSON.parse(throughFast.body) as { url: string; body: string; headers: Record<string, string | null> };
      expect(echoed.body).toBe(c.body ?? '');
      expect(echoed.url).toBe(c.path.includes('/echo') ? `/echo${c.path.includes('?') ? '?x=1' : ''}` : '/');
      // The agent-server's key is for it alone.
      expect(echoed.headers['x-session-api-key']).toBeNull();
      expect(throughFast.setCookie).toEqual(['a=1', 'b=2']);
    }
  });

  it('streams an answer as it comes, and bridges WebSockets on the server that runs the fast path', async () => {
    const slow = createServer((req, res) => {
      if (req.url !== '/events') return res.writeHead(204).end();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      setTimeout(() => res.end('data: second\n\n'), 1_500);
    });
    const slowPort = await listen(slow);
    await send(appServer, `/api/ports/${slowPort}/`, { method: 'GET', headers: withKey() });
    const takenBefore = fastTaken;
    const first = await new Promise<{ chunk: string; at: number; ended: Promise<number> }>((resolve, reject) => {
      const startedAt = Date.now();
      request({ host: '127.0.0.1', port: (fastServer.address() as AddressInfo).port, path: `/api/ports/${slowPort}/events`, headers: withKey() }, (res) => {
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

    const socket = new WebSocket(`ws://127.0.0.1:${(fastServer.address() as AddressInfo).port}/api/ports/${appPort}/socket`, { headers: withKey() });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const answer = new Promise<string>((resolve) => socket.once('message', (data: Buffer) => resolve(data.toString())));
    socket.send('ping');
    expect(await answer).toBe('ping at /socket');
    socket.close();
  });

});

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function send(
  server: Server,
  path: string,
  options: { method: string; headers: Record<string, string>; body?: string },
): Promise<{ status: number; contentType: string | undefined; setCookie: string[] | undefined; body: string }> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, method: options.method, headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], setCookie: res.headers['set-cookie'], body }));
    });
    outgoing.once('error', reject);
    outgoing.end(options.body);
  });
}
