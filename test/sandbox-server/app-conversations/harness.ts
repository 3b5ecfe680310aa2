import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { z } from 'zod';
import { createAgentServerApp, type AgentServer } from '../../../src/agent-server/app.js';
import { EventFeed } from '../../../src/sandbox-server/lifecycle-events/event-feed.js';
import { createSandboxServerApp, type SandboxServerApp } from '../../../src/sandbox-server/app.js';
import { createWebhookTargets } from '../../../src/sandbox-server/webhooks/targets.js';
import { resolveOnly, TEST_SHARED_SETTINGS } from '../harness.js';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { holdSandbox, Reconciler } from '../../../src/sandbox-server/reconciler/index.js';
import { readAnswer, type Answer } from '../../helpers/answer.js';
import { WarmPoolKeeper } from '../../../src/sandbox-server/warm-pool/keeper.js';
import { logger } from '../../../src/logger.js';
import { createFakeRuntime, type FakeRuntime } from '../../helpers/fake-runtime.js';
import type { ContainerObservation, SandboxRuntime } from '../../../src/sandbox-server/runtime/runtime.js';
import { ensureDefaultSandboxSpec } from '../../../src/sandbox-server/services/sandbox-specs/default-spec.js';
import { settleSharedSettings } from '../../../src/sandbox-server/installation/shared-settings.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';
import { Registry } from 'prom-client';
import { createRelayMetrics } from '../../../src/sandbox-server/llm-relay/relay-metrics.js';
import { RelayRoutes } from '../../../src/sandbox-server/llm-relay/relay-routes.js';
import { listenLlmRelay } from '../../../src/sandbox-server/llm-relay/relay-server.js';

export const API_KEY = 'app-conversations-key-0123456789';
/** The server's LLM_API_KEY: the relay adds it to what the agents send, and nothing else may show it. */
export const SERVER_LLM_KEY = 'sk-never-shown';
export const IMAGE = 'sandbox-server/agent-server:test';

export function listen(fetch: (request: Request) => Response | Promise<Response>, inject?: (server: ServerType) => void) {
  return new Promise<{ server: ServerType; port: number }>((resolve) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, () =>
      resolve({ server, port: (server.address() as AddressInfo).port }),
    );
    inject?.(server);
  });
}

export function closeServer(server: ServerType): Promise<void> {
  return new Promise((resolve) => {
    if ('closeAllConnections' in server) server.closeAllConnections();
    server.close(() => resolve());
  });
}

/**
 * The fake runtime, except that every sandbox's AGENT_SERVER port leads to a real agent-server on
 * this machine (`portFor` decides which), so the control plane talks real HTTP and WebSocket.
 */
export function withAgentServerPorts(fake: FakeRuntime, portFor: (sandboxId: string) => number): SandboxRuntime {
  const rewrite = (observation: ContainerObservation): ContainerObservation =>
    observation.hostPorts.AGENT_SERVER === undefined
      ? observation
      : { ...observation, hostPorts: { ...observation.hostPorts, AGENT_SERVER: portFor(observation.sandboxId) } };
  return {
    ...fake,
    create: async (request) => rewrite(await fake.create(request)),
    list: async (sandboxId) => (await fake.list(sandboxId)).map(rewrite),
    inspect: async (id) => {
      const observation = await fake.inspect(id);
      return observation && rewrite(observation);
    },
  };
}

/** A control plane over a fake runtime whose sandboxes all run one real agent-server. */
export interface Harness {
  url: string;
  fake: FakeRuntime;
  agent: AgentServer;
  agentPort: number;
  /** Sandboxes routed to another port (e.g. a broken agent-server). */
  routes: Map<string, number>;
  /** Every start of a spec with a warm pool: served from it (hit) or cold. */
  warmPoolClaims: { specId: string; hit: boolean }[];
  sandboxServer: SandboxServerApp;
  /** fetch() with the API key, JSON in and out; the body checked against `schema` (see readAnswer). */
  request<S extends z.ZodType = z.ZodUnknown>(method: string, path: string, body?: unknown, schema?: S): Promise<Answer<z.output<S>>>;
  /**
   * Stops the control plane's HTTP server, start tasks and reconciler, and starts new ones over the
   * same database. `afterTasksStopped` runs once no start task is being worked on any more.
   */
  restartControlPlane(options?: { afterTasksStopped?: () => void }): Promise<void>;
  close(): Promise<void>;
}

export async function openHarness(
  handle: DatabaseHandle,
  options: { llmModel?: string | null; llmBaseUrl?: string; sandboxStartTimeoutMs?: number; maxWarmSandboxes?: number } = {},
): Promise<Harness> {
  const warmPoolClaims: { specId: string; hit: boolean }[] = [];
  await settleSharedSettings(handle.db, TEST_SHARED_SETTINGS, true);
  await ensureDefaultSandboxSpec(handle.db, IMAGE);
  const dataDir = await makeTempDir('app-conv-agent-');
  const agent = await createAgentServerApp({ dataDir, sessionKeys: [] });
  // The real relay: the in-process agent-server reaches it on loopback, as a container reaches it at its host-gateway address.
  const relay = await listenLlmRelay(
    {
      routes: new RelayRoutes(handle.db, { log: logger }),
      serverKey: SERVER_LLM_KEY,
      acceptsFrom: (address) => address.includes('127.0.0.1'),
      metrics: createRelayMetrics(new Registry()),
      log: logger,
    },
    '127.0.0.1',
    0,
  );
  const agentListening = await listen(agent.app.fetch, agent.injectWebSocket);
  const routes = new Map<string, number>();
  const fake = createFakeRuntime();
  const runtime = withAgentServerPorts(fake, (sandboxId) => routes.get(sandboxId) ?? agentListening.port);

  let reconciler: Reconciler;
  let warmPools: WarmPoolKeeper;
  let sandboxServer: SandboxServerApp;
  let server: ServerType;
  let events: EventFeed;
  let url = '';

  async function startControlPlane() {
    events = new EventFeed();
    await events.listen(handle.listen);
    reconciler = new Reconciler({
      db: handle.db,
      runtime,
      instanceId: 'app-conversations-test',
      intervalMs: 200,
    });
    const running = reconciler;
    warmPools = new WarmPoolKeeper({
      db: handle.db,
      imageId: (image) => runtime.imageId(image),
      cap: options.maxWarmSandboxes ?? 10,
      intervalMs: 200,
      kick: (sandboxId) => running.kick(sandboxId),
      log: logger.child({ test: 'warm-pools' }),
    });
    const pools = warmPools;
    sandboxServer = createSandboxServerApp({
      db: handle.db,
      reconciler: {
        kick: (sandboxId) => running.kick(sandboxId),
        refillWarmPools: () => pools.refill(),
        onSandboxWritten: (listener) => running.onSandboxWritten(listener),
        engineAvailable: () => running.engineAvailable(),
      },
      countWarmPoolClaim: (specId, hit) => warmPoolClaims.push({ specId, hit }),
      // The operator's key: the CLI's engine commands need an admin key.
      apiKeys: [],
      adminKeys: [API_KEY],
      // Webhooks of these tests go to 127.0.0.1; no other name resolves (no DNS server is asked).
      webhookTargets: createWebhookTargets({ allowedHosts: ['127.0.0.1'], resolve: resolveOnly({}) }),
      maxRunningSandboxes: 50,
      events,
      snapshots: { runtimeOf: () => runtime, hold: (sandboxId, work) => holdSandbox({ db: handle.db, kick: (id) => running.kick(id) }, sandboxId, work) },
      appConversations: {
        llm: { model: options.llmModel === undefined ? 'test-model' : options.llmModel, baseUrl: options.llmBaseUrl ?? 'http://127.0.0.1:9/v1' },
        llmRelay: { origin: `http://127.0.0.1:${relay.port}` },
        sandboxStartTimeoutMs: options.sandboxStartTimeoutMs ?? 20_000,
      },
    });
    // The server's own listener, so proxied requests take the fast path as in production.
    server = await new Promise<ServerType>((resolve) => {
      const listening = createServer(sandboxServer.listener).listen(0, '127.0.0.1', () => resolve(listening));
    });
    sandboxServer.injectWebSocket(server);
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await reconciler.start();
    warmPools.start();
    await sandboxServer.startTasks.start();
  }

  async function stopControlPlane(afterTasksStopped?: () => void) {
    await events.close();
    await closeServer(server);
    await sandboxServer.startTasks.stop();
    afterTasksStopped?.();
    await warmPools.stop();
    await reconciler.stop();
  }

  await startControlPlane();

  const harness: Harness = {
    get url() {
      return url;
    },
    fake,
    agent,
    agentPort: agentListening.port,
    routes,
    warmPoolClaims,
    get sandboxServer() {
      return sandboxServer;
    },
    async request(method, path, body, schema) {
      const headers: Record<string, string> = { authorization: `Bearer ${API_KEY}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return readAnswer(response, schema);
    },
    async restartControlPlane(restartOptions = {}) {
      await stopControlPlane(restartOptions.afterTasksStopped);
      await startControlPlane();
    },
    async close() {
      await stopControlPlane();
      await closeServer(agentListening.server);
      await relay.close();
      await agent.close();
      await removeDir(dataDir);
    },
  };
  return harness;
}

/** An agent-server that is alive but fails every API call, like one whose disk is gone. */
export async function startBrokenAgentServer() {
  const app = new Hono();
  app.get('/alive', (c) => c.json({ status: 'ok' }));
  app.all('*', (c) => c.json({ detail: 'disk full' }, 500));
  return listen(app.fetch);
}

/** An agent-server whose agents did no work for `idleSeconds`, as its /server_info says; it serves nothing else. */
export async function startAgentServerIdleFor(idleSeconds: number) {
  const app = new Hono();
  app.get('/alive', (c) => c.json({ status: 'ok' }));
  app.get('/server_info', (c) => c.json({ title: 'agent-server', version: '1', uptime: 86_400, idle_time: idleSeconds, docs: '/docs' }));
  app.all('*', (c) => c.json({ detail: 'not served by this stand-in' }, 500));
  return listen(app.fetch);
}
