import { createServer as createHttpServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { createAgentServerApp, type AgentServer } from '../../../src/agent-server/app.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const KEY = 'session-key';

/**
 * The agent-server's way to apps in its sandbox (/api/ports, /api/port-forward), on this machine:
 * an app on ::1 only (where Node apps listening on "localhost" end up), a TCP service, and a port
 * where nothing listens.
 */
describe('ports of apps in the sandbox', () => {
  let dataDir: string;
  let agent: AgentServer;
  let http: ServerType;
  let base: string;
  let app: Server;
  let appPort: number;
  let echoPort: number;
  const seen: { headers: Record<string, unknown>; url: string; bytes: number }[] = [];

  beforeAll(async () => {
    dataDir = await makeTempDir();
    agent = await createAgentServerApp({ dataDir, sessionKeys: [KEY], maxRequestBodyBytes: 1024 });
    http = await new Promise<ServerType>((resolve) => {
      const server = serve({ fetch: agent.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(server));
    });
    agent.injectWebSocket(http as Server);
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    app = createHttpServer((req, res) => {
      let bytes = 0;
      req.on('data', (chunk: Buffer) => (bytes += chunk.length));
      req.on('end', () => {
        seen.push({ headers: req.headers, url: req.url ?? '', bytes });
        res.writeHead(201, { 'content-type': 'text/plain', 'x-app': 'yes' }).end(`got ${req.method} ${req.url}`);
      });
    });
    const sockets = new WebSocketServer({ server: app });
    sockets.on('connection', (socket, request) => socket.on('message', (data) => socket.send(`${data.toString()} at ${request.url}`)));
    await new Promise<void>((resolve) => app.listen(0, '::1', resolve));
    appPort = (app.address() as AddressInfo).port;
    const echo = createTcpServer((socket) => socket.pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    echoPort = (echo.address() as AddressInfo).port;
  });
  afterAll(async () => {
    app?.close();
    http?.close();
    await agent?.close();
    await removeDir(dataDir);
  });

  it('forwards any method, path, query and body to an app on ::1, without the session key, past the body limit', async () => {
    const answer = await fetch(`${base}/api/ports/${appPort}/a/b?c=d`, { method: 'PUT', headers: { 'x-session-api-key': KEY, cookie: 'app=1' }, body: 'x'.repeat(100_000) });
    expect(answer.status).toBe(201);
    expect(answer.headers.get('x-app')).toBe('yes');
    expect(await answer.text()).toBe('got PUT /a/b?c=d');
    const request = seen.at(-1)!;
    expect(request.bytes).toBe(100_000);
    expect(request.headers.cookie).toBe('app=1');
    expect(request.headers['x-session-api-key']).toBeUndefined();
    expect(await (await fetch(`${base}/api/ports/${appPort}`, { headers: { 'x-session-api-key': KEY } })).text()).toBe('got GET /');
  });

  it('asks for the session key', async () => {
    expect((await fetch(`${base}/api/ports/${appPort}/`)).status).toBe(401);
  });

  it('answers 502 where nothing listens, and 422 for no port', async () => {
    const closed = createTcpServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const answer = await fetch(`${base}/api/ports/${port}/`, { headers: { 'x-session-api-key': KEY } });
    expect(answer.status).toBe(502);
    expect(await answer.json()).toEqual({ detail: `Nothing answers on port ${port} in the sandbox: start the app there, listening on 0.0.0.0, 127.0.0.1 or ::1` });
    for (const bad of ['0', '65536', 'http']) {
      expect((await fetch(`${base}/api/ports/${bad}/`, { headers: { 'x-session-api-key': KEY } })).status, bad).toBe(422);
    }
  });

  it('bridges a WebSocket to the app', async () => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/api/ports/${appPort}/live?x=1`, { headers: { 'x-session-api-key': KEY } });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const answered = new Promise<string>((resolve) => ws.once('message', (data: Buffer) => resolve(data.toString())));
    ws.send('ping');
    expect(await answered).toBe('ping at /live?x=1');
    ws.close();
  });

  it('carries a TCP connection over /api/port-forward', async () => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/api/port-forward/${echoPort}`, { headers: { 'x-session-api-key': KEY } });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const echoed = new Promise<string>((resolve) => ws.once('message', (data: Buffer) => resolve(data.toString())));
    ws.send(Buffer.from('echo me'));
    expect(await echoed).toBe('echo me');
    ws.close();
  });
});
