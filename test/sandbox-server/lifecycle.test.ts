import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { EventFeed } from '../../src/sandbox-server/lifecycle-events/event-feed.js';
import { createSandboxServerApp } from '../../src/sandbox-server/app.js';
import type { DatabaseHandle } from '../../src/sandbox-server/db/client.js';
import { sandboxes } from '../../src/sandbox-server/db/schema.js';
import { LifecycleEventPageSchema } from '../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema, type SandboxInfo } from '../../src/sandbox-server/models/sandbox.js';
import { Reconciler } from '../../src/sandbox-server/reconciler/index.js';
import { readAnswer, type Answer } from '../helpers/answer.js';
import { createFakeRuntime, type FakeRuntime } from '../helpers/fake-runtime.js';
import { ensureDefaultSandboxSpec } from '../../src/sandbox-server/services/sandbox-specs/default-spec.js';
import { openTestDatabase, testDrivers } from '../helpers/database.js';

const KEY = 'lifecycle-key-0123456789';
const IMAGE = 'sandbox-server/agent-server:test';

/** The whole loop through HTTP: handlers write intent, the real reconciler converges the fake runtime. */
describe.each(testDrivers)('sandbox lifecycle with the reconciler (%s)', (driver) => {
  let handle: DatabaseHandle;
  let runtime: FakeRuntime;
  let reconciler: Reconciler;
  let request: <S extends z.ZodType = z.ZodUnknown>(method: string, path: string, schema?: S) => Promise<Answer<z.output<S>>>;

  beforeAll(async () => {
    handle = await openTestDatabase(driver);
    await ensureDefaultSandboxSpec(handle.db, IMAGE);
    runtime = createFakeRuntime();
    reconciler = new Reconciler({ db: handle.db, runtime, instanceId: 'lifecycle-test', checkAlive: async () => true });
    await reconciler.start();
    const { app } = createSandboxServerApp({ db: handle.db, reconciler, apiKeys: [KEY], maxRunningSandboxes: 10, events: new EventFeed() });
    request = async (method, path, schema) => readAnswer(await app.request(path, { method, headers: { authorization: `Bearer ${KEY}` } }), schema);
  });
  afterAll(async () => {
    await reconciler.stop();
    await handle.close();
  });

  async function get(id: string): Promise<SandboxInfo | null> {
    const { body } = await request('GET', `/api/v1/sandboxes?id=${id}`, z.array(SandboxInfoSchema.nullable()));
    return body[0] ?? null;
  }

  async function until(id: string, status: SandboxInfo['status']): Promise<SandboxInfo> {
    return vi.waitFor(
      async () => {
        const info = await get(id);
        expect(info?.status).toBe(status);
        return info as SandboxInfo;
      },
      { timeout: 20_000, interval: 20 },
    );
  }

  it('starts, pauses, resumes and deletes a sandbox', async () => {
    const started = await request('POST', '/api/v1/sandboxes', SandboxInfoSchema);
    expect(started.status).toBe(200);
    expect(started.body.status).toBe('STARTING');
    const id = started.body.id;

    const running = await until(id, 'RUNNING');
    const [row] = await handle.db.select().from(sandboxes).where(eq(sandboxes.id, id));
    const [container] = runtime.containers();
    expect(container?.state).toBe('running');
    const hostPort = container?.hostPorts.AGENT_SERVER as number;
    expect(running.session_api_key).toBe(row?.sessionApiKey);
    expect(running.exposed_urls).toEqual([{ name: 'AGENT_SERVER', url: `http://127.0.0.1:${hostPort}`, port: hostPort }]);

    expect(await request('POST', `/api/v1/sandboxes/${id}/pause`)).toEqual({ status: 200, body: { success: true } });
    const paused = await until(id, 'PAUSED');
    expect(paused).toMatchObject({ session_api_key: null, exposed_urls: null });
    expect(runtime.containers()[0]?.state).toBe('paused');

    expect(await request('POST', `/api/v1/sandboxes/${id}/resume`)).toEqual({ status: 200, body: { success: true } });
    await until(id, 'RUNNING');
    expect(runtime.containers()[0]?.state).toBe('running');

    expect(await request('DELETE', `/api/v1/sandboxes/${id}`)).toEqual({ status: 200, body: { success: true } });
    expect(await get(id)).toBeNull();
    await vi.waitFor(
      () => {
        expect(runtime.containers()).toEqual([]);
        expect(runtime.volumes()).toEqual([]);
      },
      { timeout: 20_000, interval: 20 },
    );
    expect(await request('POST', `/api/v1/sandboxes/${id}/resume`)).toEqual({ status: 409, body: { detail: 'Sandbox has been deleted' } });

    // Each status change was recorded once, by the transaction that made it, in order.
    // The deletion's event commits just after the runtime lets go of the container, so wait for it.
    await vi.waitFor(
      async () => {
        const events = await request('GET', `/api/v1/events/search?sandbox_id=${id}`, LifecycleEventPageSchema);
        expect(events.body.items.map((e) => [e.type, e.previous_status, e.status])).toEqual([
          ['sandbox.created', null, 'STARTING'],
          ['sandbox.running', 'STARTING', 'RUNNING'],
          ['sandbox.paused', 'RUNNING', 'PAUSED'],
          ['sandbox.running', 'PAUSED', 'RUNNING'],
          ['sandbox.deleted', 'RUNNING', 'DELETED'],
        ]);
      },
      { timeout: 20_000, interval: 20 },
    );
  });
});
