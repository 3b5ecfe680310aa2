import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSandboxServerApp } from '../../../src/sandbox-server/app.js';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { EventFeed } from '../../../src/sandbox-server/lifecycle-events/event-feed.js';
import { holdSandbox, Reconciler } from '../../../src/sandbox-server/reconciler/index.js';
import { UnavailableError } from '../../../src/errors/index.js';
import { readAnswer } from '../../helpers/answer.js';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';
import { createFakeRuntime } from '../../helpers/fake-runtime.js';
import { insertSandbox, insertSpec, readSandbox } from '../reconciler/fixtures.js';

const API_KEY = 'snapshot-hold-test-key';

/**
 * Two replicas on one database: the leader runs the reconciler, the follower serves a snapshot
 * request and hands its kicks to the leader (over NOTIFY in production, directly here). The
 * snapshot pauses the sandbox's container; the leader, which wants it RUNNING, must not unpause it
 * until the snapshot has ended.
 */
describe.each(testDrivers)('a snapshot taken through a replica that does not reconcile (%s)', (driver) => {
  let handle: DatabaseHandle;

  beforeAll(async () => {
    handle = await openTestDatabase(driver);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("keeps the reconciling replica's passes off the sandbox until the snapshot has ended", async () => {
    const fake = createFakeRuntime();
    const leader = new Reconciler({ db: handle.db, runtime: fake, instanceId: 'leader', checkAlive: async () => true, intervalMs: 50 });
    const events = new EventFeed();
    const follower = createSandboxServerApp({
      db: handle.db,
      reconciler: { kick: (sandboxId) => leader.kick(sandboxId) },
      apiKeys: [API_KEY],
      maxRunningSandboxes: 10,
      events,
      snapshots: { runtimeOf: () => fake, hold: (sandboxId, work) => holdSandbox({ db: handle.db, kick: (id) => leader.kick(id) }, sandboxId, work) },
    });
    try {
      const spec = await insertSpec(handle.db);
      const sandbox = await insertSandbox(handle.db, spec.id);
      await leader.start();
      await vi.waitFor(async () => expect((await readSandbox(handle.db, sandbox.id)).status).toBe('RUNNING'), { timeout: 10_000, interval: 20 });
      const [container] = fake.containers();
      const snapshotEvents = async (sandboxId: string) => {
        const page = await follower.app.request(`/api/v1/events/search?sandbox_id=${sandboxId}&type=snapshot.progress&type=snapshot.created&limit=100`, {
          headers: { authorization: `Bearer ${API_KEY}` },
        });
        const { items } = (await page.json()) as { items: { type: string; status: string | null; status_detail: string | null; subject_id: string }[] };
        return items;
      };

      const release = fake.holdSnapshots();
      const taking = follower.app.request(`/api/v1/sandboxes/${sandbox.id}/snapshots`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'under way' }),
      });
      await vi.waitFor(() => expect(fake.containers()[0]?.state).toBe('paused'), { timeout: 10_000, interval: 5 });
      // Full passes and passes of this sandbox, besides the leader's own every 50 ms.
      await leader.reconcileOnce();
      leader.kick(sandbox.id);
      await leader.reconcileOnce();
      expect(fake.containers()).toEqual([expect.objectContaining({ containerId: container?.containerId, state: 'paused' })]);
      expect(fake.calls.filter((call) => call.verb === 'unpause')).toEqual([]);
      // Each phase is committed as it ends, not with the snapshot's row: a follower sees it advance.
      const phases = (events: { type: string; status: string | null; status_detail: string | null }[]) => events.map((e) => [e.type, e.status, e.status_detail]);
      // The commit phase's event lands a moment after the container is seen paused, later on a loaded machine.
      await vi.waitFor(
        async () =>
          expect(phases(await snapshotEvents(sandbox.id))).toEqual([
            ['snapshot.progress', 'measured', '0 bytes'],
            ['snapshot.progress', 'copied', '0 bytes'],
            ['snapshot.progress', 'paused', null],
            ['snapshot.progress', 'committed', '0 bytes'],
          ]),
        { timeout: 10_000, interval: 20 },
      );

      release();
      const answer = await taking;
      expect(answer.status).toBe(201);
      const taken = (await answer.json()) as { id: string };
      expect(taken).toMatchObject({ name: 'under way', sandbox_id: sandbox.id });
      const events = await snapshotEvents(sandbox.id);
      expect(phases(events).slice(4)).toEqual([['snapshot.created', null, null]]);
      expect(new Set(events.map((event) => event.subject_id))).toEqual(new Set([taken.id]));
      await leader.reconcileOnce();
      expect(fake.containers()[0]?.state).toBe('running');
      expect(await readSandbox(handle.db, sandbox.id)).toMatchObject({ status: 'RUNNING' });
    } finally {
      await leader.stop();
      await events.close();
    }
  });

  it('refuses a sandbox that cannot be snapshotted with 409 before taking the hold, which no reconciler would acknowledge', async () => {
    const spec = await insertSpec(handle.db);
    const starting = await insertSandbox(handle.db, spec.id);
    let holds = 0;
    const events = new EventFeed();
    const { app } = createSandboxServerApp({
      db: handle.db,
      reconciler: { kick: () => undefined },
      apiKeys: [API_KEY],
      maxRunningSandboxes: 10,
      events,
      snapshots: {
        runtimeOf: () => createFakeRuntime(),
        hold: (sandboxId, work) => {
          holds++;
          return holdSandbox({ db: handle.db, kick: () => undefined }, sandboxId, work);
        },
      },
    });
    try {
      const answer = await readAnswer(
        await app.request(`/api/v1/sandboxes/${starting.id}/snapshots`, {
          method: 'POST',
          headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'too early' }),
        }),
      );
      expect(answer).toEqual({ status: 409, body: { detail: 'Sandbox is STARTING; only a RUNNING or PAUSED sandbox can be snapshotted' } });
      expect(holds).toBe(0);
    } finally {
      await events.close();
    }
  });

  it('answers 503 and never runs the work when no reconciler acknowledges the hold', async () => {
    const spec = await insertSpec(handle.db);
    const sandbox = await insertSandbox(handle.db, spec.id);
    let ran = false;
    const held = holdSandbox({ db: handle.db, kick: () => undefined, acknowledgeTimeoutMs: 200 }, sandbox.id, async () => {
      ran = true;
    });
    await expect(held).rejects.toBeInstanceOf(UnavailableError);
    expect(ran).toBe(false);
    // The hold was released: a reconciler acknowledges the next one at once.
    const leader = new Reconciler({ db: handle.db, runtime: createFakeRuntime(), instanceId: 'leader', checkAlive: async () => true });
    await leader.start();
    try {
      expect(await holdSandbox({ db: handle.db, kick: (id) => leader.kick(id) }, sandbox.id, async () => 'done')).toBe('done');
    } finally {
      await leader.stop();
    }
  });
});
