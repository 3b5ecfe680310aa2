import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxServerApp } from '../../../src/sandbox-server/app.js';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { engines } from '../../../src/sandbox-server/db/schema.js';
import { EngineRegistry } from '../../../src/sandbox-server/engines/registry.js';
import { EventFeed } from '../../../src/sandbox-server/lifecycle-events/event-feed.js';
import { Reconciler } from '../../../src/sandbox-server/reconciler/index.js';
import { logger } from '../../../src/logger.js';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';
import { createFakeRuntime } from '../../helpers/fake-runtime.js';
import { insertSandbox, insertSpec } from '../reconciler/fixtures.js';

const API_KEY = 'engine-away-test-key-0123';

/**
 * A replica that does not reconcile an engine (another holds its lease) learns that the engine is
 * away from the health its reconciler records in the database: its proxy answers 503 with
 * Retry-After for a sandbox there that does not answer, and 502 (the agent-server's own failure)
 * once the engine is healthy again.
 */
describe.each(testDrivers)("a follower's proxy while a sandbox's engine is away (%s)", (driver) => {
  let handle: DatabaseHandle;
  let registry: EngineRegistry;
  let events: EventFeed;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    handle = await openTestDatabase(driver);
    await handle.db.insert(engines).values({ name: 'away', dockerUrl: 'unix:///nowhere.sock', advertiseHost: '127.0.0.1', health: 'UNREACHABLE' });
    const runtime = createFakeRuntime();
    registry = new EngineRegistry({
      db: handle.db,
      listen: handle.listen,
      replica: 'follower',
      leaseTtlMs: 6_000,
      log: logger,
      runtimeFor: () => runtime,
      reconcilerFor: (row) => new Reconciler({ db: handle.db, runtime, engine: row.name, instanceId: 'engine-away-test' }),
      prepare: async () => {},
    });
    // Synced, never started: this replica seeks no lease, as when another replica holds it.
    await registry.sync();
    events = new EventFeed();
    const app = createSandboxServerApp({
      db: handle.db,
      reconciler: { kick: () => {}, engineAvailable: (sandboxId) => registry.engineAvailable(sandboxId) },
      apiKeys: [API_KEY],
      maxRunningSandboxes: 10,
      events,
    });
    server = await new Promise<Server>((resolve) => {
      const listening = createServer(app.listener).listen(0, '127.0.0.1', () => resolve(listening));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 120_000);
  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await events?.close();
    await registry?.stop();
    await handle?.close();
  });

  /** A port that was free a moment ago: the sandbox's agent-server, gone with its engine. */
  async function closedPort(): Promise<number> {
    const probe = await new Promise<Server>((resolve) => {
      const listening = createServer().listen(0, '127.0.0.1', () => resolve(listening));
    });
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    return port;
  }

  it('answers 503 with Retry-After while the engine is recorded unreachable, 502 once it is healthy', async () => {
    const spec = await insertSpec(handle.db);
    const sandbox = await insertSandbox(handle.db, spec.id, {
      engine: 'away',
      status: 'RUNNING',
      hostPorts: { AGENT_SERVER: await closedPort() },
      hostAddress: '127.0.0.1',
    });
    const proxied = () => fetch(`${url}/api/v1/sandboxes/${sandbox.id}/agent/alive`, { headers: { authorization: `Bearer ${API_KEY}` } });

    const away = await proxied();
    expect({ status: away.status, retryAfter: away.headers.get('retry-after') }).toEqual({ status: 503, retryAfter: '5' });
    expect(((await away.json()) as { detail: string }).detail).toMatch(/container engine is unavailable/);

    await handle.db.update(engines).set({ health: 'HEALTHY' }).where(eq(engines.name, 'away'));
    const failing = await proxied();
    expect(failing.status).toBe(502);
  });
});
