import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentServer, createAgentServerApp } from '../../src/agent-server/app.js';
import { loadConfig } from '../../src/sandbox-server/config.js';
import { SandboxInfoSchema, SandboxPageSchema } from '../../src/sandbox-server/models/sandbox.js';
import { checked } from '../helpers/answer.js';
import { createFakeRuntime } from '../helpers/fake-runtime.js';
import { type RunningSandboxServer, startSandboxServer } from '../../src/sandbox-server/server.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';

interface Answer {
  status: number;
  /** The parsed JSON body (null when there was none); read through `checked` where a test reads its fields. */
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** Temp directories made by one describe block, removed after it. */
function tempDirs(prefix: string) {
  const made: string[] = [];
  return {
    create: async () => {
      const dir = await makeTempDir(prefix);
      made.push(dir);
      return dir;
    },
    cleanup: () => Promise.all(made.map(removeDir)),
  };
}

/** node:http, because fetch() will not send a Host header of our choosing. */
function call(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const EVIL = 'http://evil.example';

describe('the control plane refuses DNS rebinding and cross-site requests, without keys', () => {
  let server: RunningSandboxServer;
  let sandboxId: string;
  const dirs = tempDirs('browser-guard-');

  beforeAll(async () => {
    const config = loadConfig({ PORT: '0', DATA_DIR: await dirs.create(), SANDBOX_SERVER_INSTANCE: 'browser-guard-test', SANDBOX_WARM_POOL: '0', ALLOWED_HOSTS: 'sandboxes.internal' });
    server = await startSandboxServer(config, { runtime: createFakeRuntime(), ensureImage: async () => 'present', checkAlive: async () => true });
    sandboxId = checked(SandboxInfoSchema, (await call(server.url, 'POST', '/api/v1/sandboxes')).body).id;
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await dirs.cleanup();
  });

  it('refuses a Host that is neither loopback nor listed, and serves listed and loopback names', async () => {
    const rebound = await call(server.url, 'GET', '/api/v1/sandboxes/search', { host: 'attacker.example' });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toEqual({ detail: 'Host attacker.example is not allowed; list it in ALLOWED_HOSTS' });
    for (const host of ['localhost', 'localhost:3000', '127.0.0.1', '[::1]:3000', 'sandboxes.internal:80']) {
      expect((await call(server.url, 'GET', '/api/v1/sandboxes/search', { host })).status, host).toBe(200);
    }
  });

  it('refuses pause and a body-less create from another site, by Origin or Sec-Fetch-Site', async () => {
    const pause = await call(server.url, 'POST', `/api/v1/sandboxes/${sandboxId}/pause`, { origin: EVIL });
    expect(pause).toMatchObject({ status: 403, body: { detail: `Origin ${EVIL} is not allowed; list it in CORS_ORIGINS` } });
    const create = await call(server.url, 'POST', '/api/v1/sandboxes', { 'sec-fetch-site': 'cross-site' });
    expect(create).toMatchObject({ status: 403, body: { detail: 'Cross-site request refused' } });
    const nullOrigin = await call(server.url, 'DELETE', `/api/v1/sandboxes/${sandboxId}`, { origin: 'null' });
    expect(nullOrigin.status).toBe(403);
    const [sandbox] = checked(z.array(SandboxInfoSchema.nullable()), (await call(server.url, 'GET', `/api/v1/sandboxes?id=${sandboxId}`)).body);
    expect(sandbox?.status).not.toBe('PAUSED');
    expect(checked(SandboxPageSchema, (await call(server.url, 'GET', '/api/v1/sandboxes/search')).body).items).toHaveLength(1);
  });

  it('serves clients without an Origin, same-origin pages, and cross-site reads with no CORS grant', async () => {
    expect((await call(server.url, 'POST', `/api/v1/sandboxes/${sandboxId}/resume`)).status).toBe(200);
    expect((await call(server.url, 'POST', `/api/v1/sandboxes/${sandboxId}/resume`, { origin: server.url, 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    const read = await call(server.url, 'GET', '/api/v1/sandboxes/search', { origin: EVIL, 'sec-fetch-site': 'cross-site' });
    expect(read.status).toBe(200);
    // Without CORS_ORIGINS the browser is never told it may read the answer.
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await call(server.url, 'OPTIONS', '/api/v1/sandboxes', { origin: EVIL, 'access-control-request-method': 'POST' });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('an agent-server refuses DNS rebinding and cross-site requests, with and without keys', () => {
  const dirs = tempDirs('browser-guard-agent-');
  const servers: { close(): void }[] = [];
  const agents: AgentServer[] = [];

  async function listen(options: { sessionKeys: string[]; corsOrigins?: string[] }): Promise<string> {
    const agent = await createAgentServerApp({
      dataDir: join(await dirs.create(), 'data'),
      sessionKeys: options.sessionKeys,
      browser: { allowedHosts: [], corsOrigins: options.corsOrigins ?? [] },
    });
    agents.push(agent);
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const s = serve({ fetch: agent.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    servers.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  afterAll(async () => {
    for (const server of servers) server.close();
    for (const agent of agents) await agent.close();
    await dirs.cleanup();
  });

  it('does not run a command a web page sends to a keyless agent-server', async () => {
    const base = await listen({ sessionKeys: [] });
    const marker = join(await dirs.create(), 'ran');
    const command = JSON.stringify({ command: `touch ${marker}` });
    const evil = await call(base, 'POST', '/api/bash/execute_bash_command', { origin: EVIL }, command);
    expect(evil).toMatchObject({ status: 403, body: { detail: `Origin ${EVIL} is not allowed; list it in CORS_ORIGINS` } });
    const rebound = await call(base, 'POST', '/api/bash/execute_bash_command', { host: 'attacker.example' }, command);
    expect(rebound.status).toBe(403);
    expect(existsSync(marker)).toBe(false);
    // An OpenHands client sends no Origin: served as before.
    expect((await call(base, 'POST', '/api/bash/execute_bash_command', {}, command)).status).toBe(200);
    expect(existsSync(marker)).toBe(true);
  });

  it('refuses the same with a valid key, and lets listed origins in with CORS headers', async () => {
    const key = 'browser-guard-session-key';
    const base = await listen({ sessionKeys: [key], corsOrigins: ['https://ui.example.com'] });
    const body = JSON.stringify({});
    const evil = await call(base, 'POST', '/api/conversations', { origin: EVIL, 'x-session-api-key': key }, body);
    expect(evil.status).toBe(403);
    const socket = await call(base, 'GET', `/sockets/events/x?session_api_key=${key}`, { origin: EVIL, upgrade: 'websocket', connection: 'Upgrade' });
    expect(socket.status).toBe(403);
    const preflight = await call(base, 'OPTIONS', '/api/conversations', { origin: 'https://ui.example.com', 'access-control-request-method': 'POST' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://ui.example.com');
    const listed = await call(base, 'GET', '/api/conversations/search', { origin: 'https://ui.example.com', 'x-session-api-key': key });
    expect(listed.status).toBe(200);
    expect(listed.headers['access-control-allow-origin']).toBe('https://ui.example.com');
  });
});
