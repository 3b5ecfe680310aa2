import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { z } from 'zod';
import { pageSchema } from '../../src/contracts/paging.js';
import { loadConfig } from '../../src/sandbox-server/config.js';
import { LifecycleEventPageSchema } from '../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecPageSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { readAnswer } from '../helpers/answer.js';
import { createFakeRuntime } from '../helpers/fake-runtime.js';
import { h2cRequest } from '../helpers/h2c.js';
import { startSandboxServer } from '../../src/sandbox-server/server.js';

const KEY = 'server-test-key-0123456789';

describe('startSandboxServer', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'sandbox-server-test-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  const start = (env: Record<string, string> = {}) => {
    const config = loadConfig({ PORT: '0', DATA_DIR: dataDir, SANDBOX_SERVER_API_KEYS: KEY, SANDBOX_SERVER_INSTANCE: 'server-test', SANDBOX_WARM_POOL: '0', ...env });
    // The fake runtime's containers have no agent-server behind them: they count as up at once.
    return startSandboxServer(config, { runtime: createFakeRuntime(), ensureImage: async () => 'present', checkAlive: async () => true });
  };

  const call = async <S extends z.ZodType = z.ZodUnknown>(url: string, method = 'GET', schema?: S) =>
    readAnswer(await fetch(url, { method, headers: { authorization: `Bearer ${KEY}` } }), schema);
  const SandboxBatchSchema = z.array(SandboxInfoSchema.nullable());

  // Opens an embedded database on disk three times: slow on a busy machine, hence the long timeout.
  it('listens, keeps its data in DATA_DIR across restarts, and creates the default spec once', async () => {
    const first = await start();
    let sandboxId: string;
    let specs: unknown;
    try {
      expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await call(`${first.url}/health`)).toEqual({ status: 200, body: { status: 'ok' } });
      expect((await call(`${first.url}/api/v1/sandboxes/search`, 'GET')).status).toBe(200);
      sandboxId = (await call(`${first.url}/api/v1/sandboxes`, 'POST', SandboxInfoSchema)).body.id;
      specs = (await call(`${first.url}/api/v1/sandbox-specs/search`)).body;
    } finally {
      await first.close();
    }
    await expect(fetch(`${first.url}/alive`)).rejects.toThrow();

    // The second start also brings an engine from DOCKER_ENGINES (one fake runtime stands in for
    // both): registered with its event, as through the API; `local`, unchanged, records nothing more.
    const local = 'local=unix:///var/run/docker.sock@127.0.0.1';
    const engineEvents = async (url: string) =>
      (await call(`${url}/api/v1/events/search?limit=100&sort_order=TIMESTAMP`, 'GET', LifecycleEventPageSchema)).body.items
        .filter((event) => event.subject_kind === 'engine')
        .map((event) => [event.type, event.subject_id, event.previous_status, event.status, event.status_detail]);
    const registered = [
      ['engine.registered', 'local', null, 'ACTIVE', 'unix:///var/run/docker.sock, published on 127.0.0.1'],
      ['engine.registered', 'e9', null, 'ACTIVE', 'unix:///var/run/docker-e9.sock, published on 127.0.0.9'],
    ];
    const second = await start({ DOCKER_ENGINES: `${local},e9=unix:///var/run/docker-e9.sock@127.0.0.9` });
    try {
      expect((await call(`${second.url}/api/v1/sandbox-specs/search`)).body).toEqual(specs);
      expect((await call(`${second.url}/api/v1/sandbox-specs/search`, 'GET', SandboxSpecPageSchema)).body.items).toHaveLength(1);
      const [sandbox] = (await call(`${second.url}/api/v1/sandboxes?id=${sandboxId}`, 'GET', SandboxBatchSchema)).body;
      expect(sandbox?.id).toBe(sandboxId);
      expect(await engineEvents(second.url)).toEqual(registered);
    } finally {
      await second.close();
    }

    // A new address for e9 is recorded once, with the old one; the unchanged `local` stays quiet.
    const third = await start({ DOCKER_ENGINES: `${local},e9=unix:///var/run/docker-e9.sock@127.0.0.10` });
    try {
      expect(await engineEvents(third.url)).toEqual([
        ...registered,
        ['engine.updated', 'e9', 'ACTIVE', 'ACTIVE', 'unix:///var/run/docker-e9.sock, published on 127.0.0.10 (was unix:///var/run/docker-e9.sock, published on 127.0.0.9)'],
      ]);
    } finally {
      await third.close();
    }
  }, 240_000);

  it('refuses to start when DOCKER_ENGINES names one dockerd twice, saying which engines', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-server-test-'));
    try {
      const config = loadConfig({
        PORT: '0',
        DATA_DIR: dir,
        SANDBOX_SERVER_API_KEYS: KEY,
        DOCKER_ENGINES: 'local=unix:///var/run/docker.sock@127.0.0.1,again=unix:///run/docker-again.sock@127.0.0.5',
      });
      const sameDockerd = async (dockerUrl: string) => (dockerUrl.includes('docker') ? 'ONE-DOCKERD' : null);
      await expect(startSandboxServer(config, { runtime: createFakeRuntime(), ensureImage: async () => 'present', engineIdentity: sameDockerd })).rejects.toThrow(
        "DOCKER_ENGINES: Engine again is the Docker engine already registered as local (ONE-DOCKERD); two engines on one dockerd would remove each other's containers as orphans",
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('stops what it started when its port is taken: the engines close their runtime once, the database and the data directory are let go', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-server-test-'));
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as AddressInfo;
      const runtime = createFakeRuntime();
      const config = loadConfig({ PORT: String(port), DATA_DIR: dir, SANDBOX_SERVER_API_KEYS: KEY, SANDBOX_SERVER_INSTANCE: 'server-test' });
      await expect(startSandboxServer(config, { runtime, ensureImage: async () => 'present', checkAlive: async () => true })).rejects.toThrow(/EADDRINUSE/);
      // Stopped by both the reconcilers and the engines components, the engines close their runtime once.
      expect(runtime.calls.filter((call) => call.verb === 'close')).toHaveLength(1);
      // The data directory's lock and its database were given up: a second start on it succeeds.
      const again = await startSandboxServer(loadConfig({ PORT: '0', DATA_DIR: dir, SANDBOX_SERVER_API_KEYS: KEY, SANDBOX_SERVER_INSTANCE: 'server-test' }), {
        runtime: createFakeRuntime(),
        ensureImage: async () => 'present',
        checkAlive: async () => true,
      });
      expect(await call(`${again.url}/health`)).toEqual({ status: 200, body: { status: 'ok' } });
      await again.close();
    } finally {
      taken.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('refuses an upgrade to h2c with 400 at both doors (the proxy fast path and the app), and a WebSocket still upgrades', async () => {
    const server = await start();
    try {
      const auth = { authorization: `Bearer ${KEY}` };
      const refused = { status: 400, body: expect.stringContaining('"detail":"Upgrade to \\"h2c\\" is not supported') };
      const sandboxId = (await call(`${server.url}/api/v1/sandboxes`, 'POST', SandboxInfoSchema)).body.id;
      const count = async () => (await call(`${server.url}/api/v1/sandboxes/search?limit=100`, 'GET', pageSchema(SandboxInfoSchema))).body.items.length;
      const before = await count();
      expect(await h2cRequest(`${server.url}/health`)).toEqual(refused);
      expect(await h2cRequest(`${server.url}/api/v1/sandboxes`, { method: 'POST', headers: auth })).toEqual(refused);
      expect(await h2cRequest(`${server.url}/api/v1/sandboxes/${sandboxId}/agent/api/conversations/count`, { headers: auth })).toEqual(refused);
      expect(await count()).toBe(before);
      const socket = new WebSocket(`${server.url.replace('http', 'ws')}/api/v1/events/socket`, { headers: auth });
      await once(socket, 'open');
      socket.close();
    } finally {
      await server.close();
    }
  }, 120_000);

  it('serves Prometheus metrics: sandboxes by status, reconcile passes, start latency and HTTP requests', async () => {
    const server = await start();
    try {
      const sandboxId = (await call(`${server.url}/api/v1/sandboxes`, 'POST', SandboxInfoSchema)).body.id;
      await vi.waitFor(async () => expect((await call(`${server.url}/api/v1/sandboxes?id=${sandboxId}`, 'GET', SandboxBatchSchema)).body[0]?.status).toBe('RUNNING'), {
        timeout: 20_000,
        interval: 50,
      });
      const response = await fetch(`${server.url}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await response.text();
      expect(text).toMatch(/^sandboxes\{status="RUNNING"\} [1-9]/m);
      expect(text).toMatch(/^sandboxes\{status="ERROR"\} 0$/m);
      expect(text).toMatch(/^reconcile_duration_seconds_count [1-9]/m);
      expect(text).toMatch(/^sandbox_start_seconds_count 1$/m);
      expect(text).toMatch(/^http_requests_total\{method="POST",route="\/api\/v1\/sandboxes",status="200"\} 1$/m);
      expect(text).not.toContain(sandboxId);
    } finally {
      await server.close();
    }
  }, 120_000);
});
