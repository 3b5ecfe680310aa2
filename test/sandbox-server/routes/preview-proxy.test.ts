import { createServer as createHttpServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { createAgentServerApp, type AgentServer } from '../../../src/agent-server/app.js';
import { sandboxes, sandboxSpecs } from '../../../src/sandbox-server/db/schema.js';
import { z } from 'zod';
import { PreviewTokenSchema } from '../../../src/sandbox-server/models/sandbox-port.js';
import { SandboxInfoSchema } from '../../../src/sandbox-server/models/sandbox.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';
import { API_KEY, openTestApp, type TestApp } from '../harness.js';

const SESSION_KEY = 'preview-session-key';
const VSCODE_HOST_PORT = 1;

function listen(fetch: (request: Request) => Response | Promise<Response>): Promise<ServerType> {
  return new Promise((resolve) => {
    const server = serve({ fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(server));
  });
}

/**
 * Preview URLs through the real control plane app and a real agent-server, both on this machine
 * (no engine): a RUNNING sandbox row points at the agent-server, and the app is a server on
 * loopback, as it would be inside the sandbox.
 */
describe('preview proxy (control plane -> agent-server -> app)', () => {
  let t: TestApp;
  let agent: AgentServer;
  let agentHttp: ServerType;
  let controlPlane: ServerType;
  let base: string;
  let app: Server;
  let appPort: number;
  let sandboxId: string;
  let dataDir: string;

  beforeAll(async () => {
    t = await openTestApp('pglite', { previewDomain: 'localhost' });
    dataDir = await makeTempDir();
    agent = await createAgentServerApp({ dataDir, sessionKeys: [SESSION_KEY] });
    agentHttp = await listen(agent.app.fetch);
    agent.injectWebSocket(agentHttp as Server);
    controlPlane = await listen(t.app.fetch);
    t.injectWebSocket(controlPlane as Server);
    base = `http://127.0.0.1:${(controlPlane.address() as AddressInfo).port}`;
    app = createHttpServer((req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`page ${req.url} ${req.headers.cookie ?? '-'}`));
    new WebSocketServer({ server: app }).on('connection', (socket, request) =>
      socket.on('message', (data) => socket.send(`pong to ${data.toString()} at ${request.url} with ${request.headers.cookie ?? 'no cookie'}`)),
    );
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appPort = (app.address() as AddressInfo).port;
    sandboxId = (await t.call('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema)).body.id;
    await t.handle.db
      .update(sandboxes)
      .set({ status: 'RUNNING', sessionApiKey: SESSION_KEY, hostAddress: '127.0.0.1', hostPorts: { AGENT_SERVER: (agentHttp.address() as AddressInfo).port, VSCODE: VSCODE_HOST_PORT } })
      .where(eq(sandboxes.id, sandboxId));
    // The spec exposes the app as VSCODE; the engine would publish it on a host port the caller may have no way to.
    const [row] = await t.handle.db.select({ specId: sandboxes.specId }).from(sandboxes).where(eq(sandboxes.id, sandboxId));
    const [spec] = await t.handle.db.select({ exposedPorts: sandboxSpecs.exposedPorts }).from(sandboxSpecs).where(eq(sandboxSpecs.id, row!.specId));
    await t.handle.db.update(sandboxSpecs).set({ exposedPorts: [...spec!.exposedPorts, { name: 'VSCODE', container_port: appPort }] }).where(eq(sandboxSpecs.id, row!.specId));
  });
  afterAll(async () => {
    app?.close();
    controlPlane?.close();
    agentHttp?.close();
    await agent?.close();
    await t?.close();
    await removeDir(dataDir);
  });

  /** A GET to the control plane with this Host (fetch() sends the URL's own). */
  function getAs(host: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; setCookie: string }> {
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest({ host: '127.0.0.1', port: (controlPlane.address() as AddressInfo).port, path, headers: { ...headers, host } }, (incoming) => {
        let body = '';
        incoming.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, body, setCookie: String(incoming.headers['set-cookie'] ?? '') }));
      });
      outgoing.once('error', reject).end();
    });
  }

  async function cookieFrom(url: string): Promise<string> {
    const traded = await fetch(url, { redirect: "manual" });
    expect(traded.status).toBe(303);
    return traded.headers.get('set-cookie')!.split(';')[0]!;
  }

  it('serves the app with a preview cookie in path mode and host mode, keeping the cookie from the app', async () => {
    const link = (await t.call('POST', `/api/v1/sandboxes/${sandboxId}/ports/${appPort}/token`, undefined, PreviewTokenSchema)).body;
    const pathCookie = await cookieFrom(link.url.replace('http://localhost', base));
    const page = await fetch(`${base}/api/v1/sandboxes/${sandboxId}/ports/${appPort}/x?y=1`, { headers: { cookie: `${pathCookie}; mine=2` } });
    expect(await page.text()).toBe('page /x?y=1 mine=2');
    const hostName = `${appPort}-${sandboxId}.localhost:${(controlPlane.address() as AddressInfo).port}`;
    const hostUrl = new URL(link.host_url!);
    const traded = await getAs(hostName, `${hostUrl.pathname}${hostUrl.search}`);
    expect(traded.status).toBe(303);
    expect(traded.setCookie).toContain('Path=/;');
    const atRoot = await getAs(hostName, '/', { cookie: traded.setCookie.split(';')[0]! });
    expect(atRoot).toMatchObject({ status: 200, body: 'page / -' });
    expect((await getAs(hostName, '/')).status).toBe(401);
  });

  it('bridges a browser WebSocket with the preview cookie in path mode and host mode, and with the API key', async () => {
    const link = (await t.call('POST', `/api/v1/sandboxes/${sandboxId}/ports/${appPort}/token`, undefined, PreviewTokenSchema)).body;
    const pathCookie = await cookieFrom(link.url.replace('http://localhost', base));
    const origin = base;
    const hostName = `${appPort}-${sandboxId}.localhost:${(controlPlane.address() as AddressInfo).port}`;
    const cases = [
      { url: `${base.replace('http', 'ws')}/api/v1/sandboxes/${sandboxId}/ports/${appPort}/ws`, headers: { cookie: pathCookie, origin } },
      { url: `${base.replace('http', 'ws')}/api/v1/sandboxes/${sandboxId}/ports/${appPort}/ws`, headers: { authorization: `Bearer ${API_KEY}` } },
    ];
    const hostUrl = new URL(link.host_url!);
    const hostCookie = (await getAs(hostName, `${hostUrl.pathname}${hostUrl.search}`)).setCookie.split(';')[0]!;
    cases.push({ url: `${base.replace('http', 'ws')}/ws`, headers: { cookie: hostCookie, origin: `http://${hostName}`, host: hostName } as never });
    for (const { url, headers } of cases) {
      const ws = new WebSocket(url, { headers });
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      const answered = new Promise<string>((resolve) => ws.once('message', (data: Buffer) => resolve(data.toString())));
      ws.send('ping');
      expect(await answered, url).toBe('pong to ping at /ws with no cookie');
      ws.close();
    }
  });

  it("lists the spec's exposed ports but AGENT_SERVER as preview URLs in exposed_urls, which serve the app", async () => {
    const answer = await fetch(`${base}/api/v1/sandboxes?id=${sandboxId}`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const [info] = z.array(SandboxInfoSchema.nullable()).parse(await answer.json());
    const agentPort = (agentHttp.address() as AddressInfo).port;
    expect(info!.exposed_urls).toEqual([
      { name: 'AGENT_SERVER', url: `http://127.0.0.1:${agentPort}`, port: agentPort },
      { name: 'VSCODE', url: `${base}/api/v1/sandboxes/${sandboxId}/ports/VSCODE/`, port: VSCODE_HOST_PORT },
    ]);
    const page = await fetch(`${info!.exposed_urls![1]!.url}at/vscode`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(await page.text()).toBe('page /at/vscode -');
  });

  it('counts preview traffic as activity for idle pause', async () => {
    // Activity is written at most once a second per sandbox: the earlier tests' requests were just now.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const before = new Date(Date.now() - 3_600_000);
    await t.handle.db.update(sandboxes).set({ lastActiveAt: before }).where(eq(sandboxes.id, sandboxId));
    const page = await fetch(`${base}/api/v1/sandboxes/${sandboxId}/ports/${appPort}/`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(page.status).toBe(200);
    await vi.waitFor(async () => {
      const [row] = await t.handle.db.select({ lastActiveAt: sandboxes.lastActiveAt }).from(sandboxes).where(eq(sandboxes.id, sandboxId));
      expect(row!.lastActiveAt.getTime()).toBeGreaterThan(before.getTime() + 60_000);
    });
  });

  it('refuses a WebSocket without a key or cookie', async () => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/api/v1/sandboxes/${sandboxId}/ports/${appPort}/ws`);
    const status = await new Promise<number>((resolve) => ws.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0)));
    expect(status).toBe(401);
  });
});
