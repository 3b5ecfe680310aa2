import { randomBytes } from 'node:crypto';
import { and, eq, isNotNull, isNull, ne } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { engines, lifecycleEvents, sandboxes, sandboxSpecs } from '../../../src/sandbox-server/db/schema.js';
import { logger } from '../../../src/logger.js';
import { maintainWarmPools } from '../../../src/sandbox-server/warm-pool/maintain.js';
import { drainEngine } from '../../../src/sandbox-server/services/engines/drain-engine.js';
import type { ServiceContext } from '../../../src/sandbox-server/services/context.js';
import { claimWarmSandbox } from '../../../src/sandbox-server/services/sandboxes/claim-warm-sandbox.js';
import { searchSandboxes } from '../../../src/sandbox-server/services/sandboxes/search-sandboxes.js';
import { startSandbox } from '../../../src/sandbox-server/services/sandboxes/start-sandbox.js';
import { warmPoolFingerprint } from '../../../src/sandbox-server/warm-pool/fingerprint.js';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';
import { createFakeRuntime } from '../../helpers/fake-runtime.js';

const SPEC = 'pooled-spec';
const FINGERPRINT = 'current';

describe.each(testDrivers)('claiming warm-pool members (%s)', (driver) => {
  let handle: DatabaseHandle;
  let ctx: ServiceContext;
  const claims: { specId: string; hit: boolean }[] = [];
  let refills = 0;

  beforeAll(async () => {
    handle = await openTestDatabase(driver);
    ctx = {
      db: handle.db,
      reconciler: { kick: () => undefined, refillWarmPools: () => void refills++ },
      maxRunningSandboxes: 1000,
      runtimes: { available: null },
      countWarmPoolClaim: (specId, hit) => void claims.push({ specId, hit }),
      snapshots: { runtimeOf: () => createFakeRuntime(), hold: (_sandboxId, work) => work() },
    };
  });
  afterAll(() => handle?.close());
  beforeEach(async () => {
    await handle.db.delete(lifecycleEvents);
    await handle.db.delete(sandboxes);
    await handle.db.delete(sandboxSpecs);
    await handle.db.delete(engines).where(ne(engines.name, 'local'));
    await handle.db.insert(engines).values({ name: 'e1', dockerUrl: 'unix:///var/run/docker-e1.sock', advertiseHost: '127.0.0.2' });
    await handle.db
      .insert(sandboxSpecs)
      .values({ id: SPEC, image: 'img', workingDir: '/workspace', exposedPorts: [], warmPoolSize: 3, warmPoolFingerprint: FINGERPRINT });
    claims.length = 0;
    refills = 0;
  });

  async function addMember(overrides: Partial<typeof sandboxes.$inferInsert> = {}): Promise<string> {
    const id = randomBytes(8).toString('hex');
    await handle.db.insert(sandboxes).values({
      id,
      specId: SPEC,
      engine: 'local',
      desiredState: 'RUNNING',
      status: 'RUNNING',
      sessionApiKey: `key-${id}`,
      hostPorts: { AGENT_SERVER: 40_000 },
      hostAddress: '127.0.0.1',
      poolFingerprint: FINGERPRINT,
      createdAt: new Date('2030-01-01T00:00:00Z'),
      ...overrides,
    });
    return id;
  }

  it('answers RUNNING with the member own key and URLs, makes it visible, and records sandbox.created and sandbox.claimed once', async () => {
    const member = await addMember();
    expect((await searchSandboxes(ctx, { limit: 10 })).items).toEqual([]);

    const before = Date.now();
    const info = await startSandbox(ctx, { specId: SPEC, createdByUserId: 'alice' });

    expect(info).toMatchObject({
      id: member,
      status: 'RUNNING',
      session_api_key: `key-${member}`,
      exposed_urls: [{ name: 'AGENT_SERVER', url: 'http://127.0.0.1:40000', port: 40_000 }],
      created_by_user_id: 'alice',
    });
    // Its life starts at the claim: creation time (TTL, listings) is now, not when the pool made it.
    expect(Date.parse(info.created_at)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(info.created_at)).toBeLessThanOrEqual(Date.now());
    expect((await searchSandboxes(ctx, { limit: 10 })).items.map((s) => s.id)).toEqual([member]);
    const events = await handle.db.select().from(lifecycleEvents).where(eq(lifecycleEvents.sandboxId, member));
    expect(events.map((e) => [e.type, e.previousStatus, e.status])).toEqual([
      ['sandbox.created', null, 'RUNNING'],
      ['sandbox.claimed', 'RUNNING', 'RUNNING'],
    ]);
    expect(claims).toEqual([{ specId: SPEC, hit: true }]);
    expect(refills).toBe(1);
  });

  it('falls back to a cold start when no member is ready, current and unclaimed', async () => {
    await addMember({ status: 'STARTING', hostPorts: null });
    await addMember({ poolFingerprint: 'made-from-an-older-image' });
    await addMember({ desiredState: 'DELETED' });

    const info = await startSandbox(ctx, { specId: SPEC });

    expect(info.status).toBe('STARTING');
    expect(info.session_api_key).toBeNull();
    expect(claims).toEqual([{ specId: SPEC, hit: false }]);
    const members = await handle.db.select().from(sandboxes).where(isNotNull(sandboxes.poolFingerprint));
    expect(members).toHaveLength(3);
  });

  it('never hands one member to two of many concurrent starts', async () => {
    const members = [await addMember(), await addMember(), await addMember()];

    const answers = await Promise.all(Array.from({ length: 12 }, () => startSandbox(ctx, { specId: SPEC })));

    const warm = answers.filter((a) => a.status === 'RUNNING').map((a) => a.id);
    expect(warm.sort()).toEqual([...members].sort());
    expect(answers.filter((a) => a.status === 'STARTING')).toHaveLength(9);
    const claimed = await handle.db.select().from(lifecycleEvents).where(eq(lifecycleEvents.type, 'sandbox.claimed'));
    expect(claimed.map((e) => e.sandboxId).sort()).toEqual([...members].sort());
  });

  it('skips a member another transaction holds instead of waiting for it or taking it twice', async () => {
    const members = [await addMember(), await addMember(), await addMember(), await addMember()];

    const taken = await Promise.all(
      Array.from({ length: 10 }, () =>
        handle.db.transaction((tx) => claimWarmSandbox(tx, { specId: SPEC, fingerprint: FINGERPRINT, createdByUserId: null })),
      ),
    );

    const ids = taken.filter((row) => row !== null).map((row) => row.id);
    expect(ids.sort()).toEqual([...members].sort());
    expect(taken.filter((row) => row === null)).toHaveLength(6);
    const left = await handle.db
      .select()
      .from(sandboxes)
      .where(and(eq(sandboxes.specId, SPEC), isNotNull(sandboxes.poolFingerprint)));
    expect(left).toEqual([]);
  });

  it('passes over members on a cordoned or draining engine', async () => {
    await addMember({ engine: 'e1' });
    for (const state of ['CORDONED', 'DRAINING'] as const) {
      await handle.db.update(engines).set({ state }).where(eq(engines.name, 'e1'));
      expect(await handle.db.transaction((tx) => claimWarmSandbox(tx, { specId: SPEC, fingerprint: FINGERPRINT, createdByUserId: null }))).toBeNull();
    }
  });

  it('hands each member of a draining engine to a start or retires it, never both, and refills the pool on another engine', async () => {
    const [spec] = await handle.db.select().from(sandboxSpecs).where(eq(sandboxSpecs.id, SPEC));
    const fingerprint = warmPoolFingerprint(spec!, 'sha256:pooled');
    await handle.db.update(sandboxSpecs).set({ warmPoolFingerprint: fingerprint }).where(eq(sandboxSpecs.id, SPEC));
    const members = await Promise.all(Array.from({ length: 6 }, () => addMember({ engine: 'e1', poolFingerprint: fingerprint })));
    const topUp = { db: handle.db, imageId: async () => 'sha256:pooled', cap: 10, log: logger };

    // Starts race the drain and the top-up that follows it.
    const [, ...answers] = await Promise.all([
      (async () => {
        await drainEngine(ctx, 'e1');
        return maintainWarmPools(topUp);
      })(),
      ...Array.from({ length: 6 }, () => startSandbox(ctx, { specId: SPEC })),
    ]);

    const claimed = answers.filter((answer) => members.includes(answer.id)).map((answer) => answer.id);
    const rows = await handle.db.select().from(sandboxes).where(eq(sandboxes.specId, SPEC));
    for (const member of members) {
      const row = rows.find((r) => r.id === member)!;
      if (claimed.includes(member)) expect(row).toMatchObject({ poolFingerprint: null, desiredState: 'RUNNING' });
      else expect(row).toMatchObject({ poolFingerprint: fingerprint, desiredState: 'DELETED' });
    }
    // The pool's three are placed anew, on the engine that takes new sandboxes.
    const replacements = await handle.db
      .select({ engine: sandboxes.engine })
      .from(sandboxes)
      .where(and(eq(sandboxes.specId, SPEC), isNotNull(sandboxes.poolFingerprint), eq(sandboxes.desiredState, 'RUNNING')));
    expect(replacements).toEqual([{ engine: 'local' }, { engine: 'local' }, { engine: 'local' }]);
    const claimedLater = await handle.db.select({ id: sandboxes.id }).from(sandboxes).where(and(eq(sandboxes.engine, 'e1'), isNull(sandboxes.poolFingerprint)));
    expect(claimedLater.map((row) => row.id).sort()).toEqual([...claimed].sort());
  });

  it('keeps a pool and its members when no engine can say what its image is, and replaces them once the image changed', async () => {
    const members = await Promise.all(Array.from({ length: 3 }, () => addMember()));
    const unreachable = { db: handle.db, imageId: () => Promise.reject(new Error('engine unreachable')), cap: 10, log: logger };
    expect(await maintainWarmPools(unreachable)).toEqual([]);
    const [spec] = await handle.db.select().from(sandboxSpecs).where(eq(sandboxSpecs.id, SPEC));
    expect(spec!.warmPoolFingerprint).toBe(FINGERPRINT);
    const kept = await handle.db.select({ id: sandboxes.id, desiredState: sandboxes.desiredState }).from(sandboxes).where(eq(sandboxes.specId, SPEC));
    expect(kept.map((row) => row.desiredState)).toEqual(['RUNNING', 'RUNNING', 'RUNNING']);

    // An answer that the image is gone (or another) is a change: the members are replaced.
    await maintainWarmPools({ ...unreachable, imageId: async () => null });
    const retired = await handle.db.select({ id: sandboxes.id }).from(sandboxes).where(and(eq(sandboxes.specId, SPEC), eq(sandboxes.desiredState, 'DELETED')));
    expect(retired.map((row) => row.id).sort()).toEqual([...members].sort());
  });
});
