import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { sandboxes } from '../../../src/sandbox-server/db/schema.js';
import { EventFeed } from '../../../src/sandbox-server/lifecycle-events/event-feed.js';
import { recordEvent } from '../../../src/sandbox-server/lifecycle-events/record-event.js';
import { agentServerTarget } from '../../../src/sandbox-server/agent-client.js';
import type { ServiceContext } from '../../../src/sandbox-server/services/context.js';
import { ObservedWrites } from '../../../src/sandbox-server/lifecycle-events/observed-writes.js';
import { waitForAgentServer } from '../../../src/sandbox-server/services/sandboxes/wait-for-agent-server.js';
import { eq } from 'drizzle-orm';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';
import { createFakeRuntime } from '../../helpers/fake-runtime.js';
import { insertSandbox, insertSpec, readSandbox } from '../reconciler/fixtures.js';

/** An agent-server's /alive: 200 for `key` once `up`, 503 before; how often it was asked. */
async function startAlive(key: string): Promise<{ server: Server; port: number; up: () => void; asked: () => number }> {
  let up = false;
  let asked = 0;
  const server = createServer((req, res) => {
    asked++;
    res.writeHead(up && req.url === '/alive' && req.headers['x-session-api-key'] === key ? 200 : 503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, up: () => (up = true), asked: () => asked };
}

describe.each(testDrivers)('waiting for a sandbox agent-server (%s)', (driver) => {
  let handle: DatabaseHandle;
  let events: EventFeed;
  let ctx: ServiceContext;

  beforeAll(async () => {
    handle = await openTestDatabase(driver);
    events = new EventFeed();
    await events.listen(handle.listen);
    ctx = {
      db: handle.db,
      reconciler: { kick: () => undefined },
      maxRunningSandboxes: 1000,
      runtimes: { available: null },
      snapshots: { runtimeOf: () => createFakeRuntime(), hold: (_sandboxId, work) => work() },
      nextSandboxChange: () => events.nextChange(),
    };
  });
  afterAll(async () => {
    await events.close();
    await handle.close();
  });

  it('wakes when the sandbox turns RUNNING (its lifecycle event commits), not at the next poll', async () => {
    const spec = await insertSpec(handle.db);
    const row = await insertSandbox(handle.db, spec.id);
    // A poll far beyond the test's own timeout: only the event can end this wait in time.
    const waited = waitForAgentServer(ctx, row.id, { resume: 'never', timeoutMs: 600_000, pollMs: 600_000 });
    await handle.db.transaction(async (tx) => {
      await tx.update(sandboxes).set({ status: 'RUNNING', hostPorts: { AGENT_SERVER: 41234 }, hostAddress: '127.0.0.1' }).where(eq(sandboxes.id, row.id));
      await recordEvent(tx, {
        type: 'sandbox.running',
        subjectKind: 'sandbox',
        subjectId: row.id,
        sandboxId: row.id,
        previousStatus: 'STARTING',
        status: 'RUNNING',
        statusDetail: null,
      });
    });
    expect(await waited).toEqual(agentServerTarget('127.0.0.1', 41234, row.sessionApiKey));
  });

  it('waits for a sandbox wanted RUNNING while still PAUSED (resumed, or moved by a drain) instead of refusing it as paused', async () => {
    const spec = await insertSpec(handle.db, { resumeOnAccess: false });
    const row = await insertSandbox(handle.db, spec.id, { status: 'PAUSED' });
    const waited = waitForAgentServer(ctx, row.id, { resume: 'if-spec-allows', timeoutMs: 600_000, pollMs: 600_000 });
    await handle.db.transaction(async (tx) => {
      await tx.update(sandboxes).set({ status: 'RUNNING', hostPorts: { AGENT_SERVER: 41235 }, hostAddress: '127.0.0.1' }).where(eq(sandboxes.id, row.id));
      await recordEvent(tx, { type: 'sandbox.running', subjectKind: 'sandbox', subjectId: row.id, sandboxId: row.id, previousStatus: 'PAUSED', status: 'RUNNING', statusDetail: null });
    });
    expect(await waited).toEqual(agentServerTarget('127.0.0.1', 41235, row.sessionApiKey));
  });

  it('ends as soon as a STARTING sandbox whose container is up answers /alive with its key, before RUNNING is written', async () => {
    const spec = await insertSpec(handle.db);
    const row = await insertSandbox(handle.db, spec.id);
    const alive = await startAlive(row.sessionApiKey);
    try {
      await handle.db
        .update(sandboxes)
        .set({ statusDetail: 'waiting for the agent-server to answer /alive', hostPorts: { AGENT_SERVER: alive.port }, hostAddress: '127.0.0.1' })
        .where(eq(sandboxes.id, row.id));
      // A poll far beyond the test's own timeout, and no event: only the answer can end this wait in time.
      const waited = waitForAgentServer(ctx, row.id, { resume: 'never', timeoutMs: 600_000, pollMs: 600_000 });
      await vi.waitFor(() => expect(alive.asked()).toBeGreaterThan(1), { timeout: 10_000, interval: 10 });
      alive.up();
      expect(await waited).toEqual(agentServerTarget('127.0.0.1', alive.port, row.sessionApiKey));
      expect((await readSandbox(handle.db, row.id)).status).toBe('STARTING');
    } finally {
      await new Promise((resolve) => alive.server.close(resolve));
    }
  });

  it("wakes when this process's reconciler writes that the sandbox's container is up, not at the next poll", async () => {
    const writes = new ObservedWrites();
    const withWrites: ServiceContext = { ...ctx, nextSandboxChange: (sandboxId, stop) => writes.next(sandboxId, stop) };
    const spec = await insertSpec(handle.db);
    const row = await insertSandbox(handle.db, spec.id, { statusDetail: 'creating container' });
    const alive = await startAlive(row.sessionApiKey);
    alive.up();
    try {
      const waited = waitForAgentServer(withWrites, row.id, { resume: 'never', timeoutMs: 600_000, pollMs: 600_000 });
      // Another sandbox's write wakes nothing here; this one's does.
      writes.written('another-sandbox');
      await handle.db.update(sandboxes).set({ hostPorts: { AGENT_SERVER: alive.port }, hostAddress: '127.0.0.1' }).where(eq(sandboxes.id, row.id));
      writes.written(row.id);
      expect(await waited).toEqual(agentServerTarget('127.0.0.1', alive.port, row.sessionApiKey));
    } finally {
      await new Promise((resolve) => alive.server.close(resolve));
    }
  });

  it('asks no agent-server of a sandbox that is not STARTING and wanted RUNNING', async () => {
    const spec = await insertSpec(handle.db);
    const alive = await startAlive('any');
    alive.up();
    try {
      const ports = { hostPorts: { AGENT_SERVER: alive.port }, hostAddress: '127.0.0.1' };
      const paused = await insertSandbox(handle.db, spec.id, { ...ports, status: 'PAUSED', desiredState: 'PAUSED' });
      await expect(waitForAgentServer(ctx, paused.id, { resume: 'never', timeoutMs: 600_000 })).rejects.toThrow(/paused/);
      const failed = await insertSandbox(handle.db, spec.id, { ...ports, status: 'ERROR', statusDetail: 'container exited with code 1' });
      await expect(waitForAgentServer(ctx, failed.id, { resume: 'never', timeoutMs: 600_000 })).rejects.toThrow(/ERROR/);
      const leaving = await insertSandbox(handle.db, spec.id, { ...ports, desiredState: 'DELETED' });
      await expect(waitForAgentServer(ctx, leaving.id, { resume: 'never', timeoutMs: 600_000 })).rejects.toThrow(/deleted/);
      expect(alive.asked()).toBe(0);
    } finally {
      await new Promise((resolve) => alive.server.close(resolve));
    }
  });

  it('gives up when its caller aborts, without waiting out the poll', async () => {
    const spec = await insertSpec(handle.db);
    const row = await insertSandbox(handle.db, spec.id);
    const abort = new AbortController();
    const waited = waitForAgentServer(ctx, row.id, { resume: 'never', timeoutMs: 600_000, pollMs: 600_000, signal: abort.signal });
    abort.abort();
    await expect(waited).rejects.toThrow(/abort/i);
  });
});
