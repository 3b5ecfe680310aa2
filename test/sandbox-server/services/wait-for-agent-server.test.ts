import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { sandboxes } from '../../../src/sandbox-server/db/schema.js';
import { EventFeed } from '../../../src/sandbox-server/lifecycle-events/event-feed.js';
import { recordEvent } from '../../../src/sandbox-server/lifecycle-events/record-event.js';
import { agentServerTarget } from '../../../src/sandbox-server/proxy/forward-http.js';
import type { ServiceContext } from '../../../src/sandbox-server/services/context.js';
import { waitForAgentServer } from '../../../src/sandbox-server/services/sandboxes/wait-for-agent-server.js';
import { eq } from 'drizzle-orm';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';
import { createFakeRuntime } from '../../helpers/fake-runtime.js';
import { insertSandbox, insertSpec } from '../reconciler/fixtures.js';

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
      runtimes: { default: 'runc', available: null },
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

  it('gives up when its caller aborts, without waiting out the poll', async () => {
    const spec = await insertSpec(handle.db);
    const row = await insertSandbox(handle.db, spec.id);
    const abort = new AbortController();
    const waited = waitForAgentServer(ctx, row.id, { resume: 'never', timeoutMs: 600_000, pollMs: 600_000, signal: abort.signal });
    abort.abort();
    await expect(waited).rejects.toThrow(/abort/i);
  });
});
