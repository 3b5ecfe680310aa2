import { and, eq, isNotNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '../../src/sandbox-server/db/client.js';
import { lifecycleEvents, sandboxes, sandboxSpecs } from '../../src/sandbox-server/db/schema.js';
import { z } from 'zod';
import { AppConversationStartTaskSchema } from '../../src/sandbox-server/models/app-conversation.js';
import { SandboxInfoSchema, SandboxPageSchema, type SandboxInfo } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema, type SandboxSpecInfo } from '../../src/sandbox-server/models/sandbox-spec.js';
import { type LifecycleEvent, LifecycleEventPageSchema } from '../../src/sandbox-server/models/lifecycle-event.js';
import { CreatedWebhookSchema, WebhookDeliveryPageSchema } from '../../src/sandbox-server/models/webhook.js';
import { openTestDatabase } from '../helpers/database.js';
import { API_KEY, type Harness, openHarness } from './app-conversations/harness.js';
import { SseReader } from './lifecycle-events/sse.js';

const WAIT = { timeout: 30_000, interval: 50 };
const SPEC = 'warm';
const IMAGE = 'warm-image:1';

/**
 * Warm pools through the control plane's HTTP API, its reconciler and a fake engine whose every
 * sandbox is one real agent-server (so the proxy is exercised for real). The Docker end to end is
 * in test/e2e/warm-pool.test.ts; the claim's concurrency in services/warm-pool-claim.test.ts.
 */
describe('warm pools', () => {
  let handle: DatabaseHandle;
  let h: Harness;

  beforeAll(async () => {
    handle = await openTestDatabase('pglite');
    h = await openHarness(handle, { maxWarmSandboxes: 3 });
  });
  afterAll(async () => {
    await h?.close();
    await handle?.close();
  });

  async function spec(id = SPEC): Promise<SandboxSpecInfo | undefined> {
    const { body } = await h.request('GET', `/api/v1/sandbox-specs?id=${id}`, undefined, z.array(SandboxSpecInfoSchema.nullable()));
    return body[0] ?? undefined;
  }

  async function members(): Promise<{ id: string; status: string; containerId: string | null }[]> {
    return handle.db
      .select({ id: sandboxes.id, status: sandboxes.status, containerId: sandboxes.containerId })
      .from(sandboxes)
      .where(and(eq(sandboxes.specId, SPEC), isNotNull(sandboxes.poolFingerprint), eq(sandboxes.desiredState, 'RUNNING')));
  }

  /** The pool is full: `size` members RUNNING, each with its container, and nothing else pending. */
  async function poolFull(size: number) {
    return vi.waitFor(async () => {
      const now = await members();
      expect(now.filter((m) => m.status === 'RUNNING' && m.containerId !== null)).toHaveLength(size);
      expect(now).toHaveLength(size);
      return now;
    }, WAIT);
  }

  async function start(): Promise<SandboxInfo> {
    const { status, body } = await h.request('POST', '/api/v1/sandboxes', { sandbox_spec_id: SPEC }, SandboxInfoSchema);
    expect(status).toBe(200);
    return body;
  }

  it('keeps a created spec\'s pool full, hidden from the sandbox listings and shown on the spec', async () => {
    const created = await h.request('POST', '/api/v1/sandbox-specs', { id: SPEC, image: IMAGE, warm_pool_size: 2 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ warm_pool_size: 2, warm_pool_ready: 0 });

    const pool = await poolFull(2);
    expect(await spec()).toMatchObject({ warm_pool_size: 2, warm_pool_ready: 2 });
    const listed = await h.request('GET', '/api/v1/sandboxes/search', undefined, SandboxPageSchema);
    expect(listed.body.items).toEqual([]);
    const byId = await h.request('GET', `/api/v1/sandboxes?id=${pool[0]!.id}`);
    expect(byId.body).toEqual([null]);
    expect((await h.request('DELETE', `/api/v1/sandboxes/${pool[0]!.id}`)).status).toBe(404);
    expect((await h.request('GET', `/api/v1/sandboxes/${pool[0]!.id}/agent/alive`)).status).toBe(404);
  });

  it('answers a start RUNNING at once with a member that works through the proxy, then refills', async () => {
    const before = await poolFull(2);

    const sandbox = await start();

    expect(sandbox).toMatchObject({ status: 'RUNNING', sandbox_spec_id: SPEC, session_api_key: expect.any(String) });
    expect(sandbox.exposed_urls).toEqual([expect.objectContaining({ name: 'AGENT_SERVER' })]);
    expect(before.map((m) => m.id)).toContain(sandbox.id);
    const proxied = await h.request('GET', `/api/v1/sandboxes/${sandbox.id}/agent/api/conversations/count`);
    expect(proxied).toEqual({ status: 200, body: expect.any(Number) });
    const listed = await h.request('GET', '/api/v1/sandboxes/search', undefined, SandboxPageSchema);
    expect(listed.body.items.map((s) => s.id)).toEqual([sandbox.id]);
    const claimed = await handle.db.select().from(lifecycleEvents).where(eq(lifecycleEvents.sandboxId, sandbox.id));
    expect(claimed.filter((e) => e.type === 'sandbox.claimed')).toHaveLength(1);

    const after = await poolFull(2);
    expect(after.map((m) => m.id)).not.toContain(sandbox.id);
    expect(h.warmPoolClaims.at(-1)).toEqual({ specId: SPEC, hit: true });
  });

  it('keeps members out of lifecycle events, streams and webhooks until a start claims one, which then reads created, claimed', async () => {
    const hook = await h.request('POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/hooks', event_types: [] }, CreatedWebhookSchema);
    expect(hook.status).toBe(201);
    const pool = await poolFull(2);
    const stream = new SseReader((await fetch(`${h.url}/api/v1/events/stream`, { headers: { authorization: `Bearer ${API_KEY}` } })).body!);
    try {
      for (const member of pool) {
        const events = await h.request('GET', `/api/v1/events/search?sandbox_id=${member.id}`, undefined, LifecycleEventPageSchema);
        expect(events.body.items).toEqual([]);
      }

      const sandbox = await start();
      // The pool refills with members as invisible as these; the deletion is the last event to wait for.
      await poolFull(2);
      expect((await h.request('DELETE', `/api/v1/sandboxes/${sandbox.id}`)).status).toBe(200);
      const seen: LifecycleEvent[] = [];
      while (seen.at(-1)?.type !== 'sandbox.deleted') seen.push((await stream.take(1))[0]!.data);
      expect(seen.map((e) => [e.sandbox_id, e.type, e.previous_status, e.status, e.status_detail])).toEqual([
        [sandbox.id, 'sandbox.created', null, 'RUNNING', 'claimed from the warm pool'],
        [sandbox.id, 'sandbox.claimed', 'RUNNING', 'RUNNING', 'claimed from the warm pool'],
        [sandbox.id, 'sandbox.deleted', 'RUNNING', 'DELETED', 'deleted'],
      ]);
      // The webhook was given exactly the events the stream showed: none of a member's.
      const deliveries = await h.request('GET', `/api/v1/webhooks/${hook.body.id}/deliveries`, undefined, WebhookDeliveryPageSchema);
      expect(deliveries.body.items.map((d) => d.event_id).sort()).toEqual(seen.map((e) => e.id).sort());
    } finally {
      await stream.cancel();
      await h.request('DELETE', `/api/v1/webhooks/${hook.body.id}`);
    }
  });

  it('starts cold when the pool is empty', async () => {
    await poolFull(2);
    // Refills stay in flight, so the pool cannot be ready again before the third start.
    const release = h.fake.holdCreates();
    try {
      const [first, second, third] = [await start(), await start(), await start()];
      expect([first.status, second.status, third.status]).toEqual(['RUNNING', 'RUNNING', 'STARTING']);
      expect(third.session_api_key).toBeNull();
      expect(h.warmPoolClaims.slice(-3).map((c) => c.hit)).toEqual([true, true, false]);
    } finally {
      release();
    }
    await poolFull(2);
  });

  it('keeps its members across a control plane restart: adopted, not recreated, not leaked, claimed once', async () => {
    const before = await poolFull(2);
    const containersBefore = h.fake.containers().length;

    await h.restartControlPlane();

    const after = await poolFull(2);
    expect(after.map((m) => [m.id, m.containerId]).sort()).toEqual(before.map((m) => [m.id, m.containerId]).sort());
    expect(h.fake.containers()).toHaveLength(containersBefore);
    const claimed = await Promise.all([start(), start()]);
    expect(claimed.map((s) => s.status)).toEqual(['RUNNING', 'RUNNING']);
    expect(claimed.map((s) => s.id).sort()).toEqual(before.map((m) => m.id).sort());
    await poolFull(2);
  });

  it('replaces its members when the spec\'s image is rebuilt, and never hands out a stale one', async () => {
    const stale = await poolFull(2);

    h.fake.rebuildImage(IMAGE);

    await vi.waitFor(async () => {
      const now = await poolFull(2);
      expect(now.map((m) => m.id).filter((id) => stale.some((s) => s.id === id))).toEqual([]);
    }, WAIT);
    await vi.waitFor(() => {
      const live = new Set(h.fake.containers().map((c) => c.sandboxId));
      for (const { id } of stale) expect(live.has(id)).toBe(false);
    }, WAIT);
    const sandbox = await start();
    expect(stale.map((m) => m.id)).not.toContain(sandbox.id);
  });

  it('keeps at most MAX_WARM_SANDBOXES members across pools', async () => {
    const other = await h.request('POST', '/api/v1/sandbox-specs', { id: 'warm-too', image: IMAGE, warm_pool_size: 5 });
    expect(other.status).toBe(201);
    await poolFull(2);
    await vi.waitFor(async () => {
      expect((await spec('warm-too'))?.warm_pool_ready).toBe(1);
    }, WAIT);
    const all = await handle.db.select().from(sandboxes).where(and(isNotNull(sandboxes.poolFingerprint), eq(sandboxes.desiredState, 'RUNNING')));
    expect(all).toHaveLength(3);
  });

  it('retires the members of a deleted spec with it; they never keep a spec from being deleted', async () => {
    const [member] = await handle.db
      .select({ id: sandboxes.id })
      .from(sandboxes)
      .where(and(eq(sandboxes.specId, 'warm-too'), isNotNull(sandboxes.poolFingerprint), eq(sandboxes.desiredState, 'RUNNING')));

    expect((await h.request('DELETE', '/api/v1/sandbox-specs/warm-too')).status).toBe(200);

    await vi.waitFor(() => expect(h.fake.containers().map((c) => c.sandboxId)).not.toContain(member!.id), WAIT);
    await poolFull(2);
  });

  it('serves an app conversation start from the default spec\'s pool', async () => {
    // As SANDBOX_WARM_POOL=1 would at start; the reconciler's sweep (every 200 ms) finds the new size.
    await handle.db.update(sandboxSpecs).set({ warmPoolSize: 1 }).where(eq(sandboxSpecs.isDefault, true));
    const [defaultSpec] = await handle.db.select().from(sandboxSpecs).where(eq(sandboxSpecs.isDefault, true));
    const ready = await vi.waitFor(async () => {
      const rows = await handle.db
        .select()
        .from(sandboxes)
        .where(and(eq(sandboxes.specId, defaultSpec!.id), isNotNull(sandboxes.poolFingerprint), eq(sandboxes.status, 'RUNNING')));
      expect(rows).toHaveLength(1);
      return rows[0]!;
    }, WAIT);

    const { body: task } = await h.request('POST', '/api/v1/app-conversations', {}, AppConversationStartTaskSchema);
    const done = await vi.waitFor(async () => {
      const { body } = await h.request('GET', `/api/v1/app-conversations/start-tasks?ids=${task.id}`, undefined, z.array(AppConversationStartTaskSchema));
      expect(body[0]?.status).toBe('READY');
      return body[0];
    }, WAIT);
    expect(done?.sandbox_id).toBe(ready.id);
  });
});
