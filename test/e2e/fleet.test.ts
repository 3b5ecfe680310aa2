import { type ChildProcess, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { type EngineInfo, EnginePageSchema } from '../../src/sandbox-server/models/engine.js';
import { LifecycleEventPageSchema } from '../../src/sandbox-server/models/lifecycle-event.js';
import { type SandboxInfo, SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { LABEL_INSTANCE, LABEL_SANDBOX_ID } from '../../src/sandbox-server/runtime/runtime.js';
import { ensureBuilt } from '../helpers/build.js';
import { controlPlaneCaller, killProcess, spawnControlPlane } from '../helpers/control-plane-process.js';
import { createTestDatabase } from '../helpers/database.js';
import { ALIVE_SERVER_COMMAND, connectDocker, removeInstanceResources, TEST_BASE_IMAGE } from '../helpers/docker.js';
import { freePort } from '../helpers/processes.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const SHARED = process.env.SHARED_DIR ?? join(ROOT, '..', 'shared');
const KEY = 'fleet-test-key-0123456789';
const WAIT = { timeout: 120_000, interval: 250 };

/** The machine's engine and two more (e1, e2: this suite's; the fault suite has e3), each publishing on its own loopback address. */
const ENGINES = [
  { name: 'main', socket: '/var/run/docker.sock', host: '127.0.0.1' },
  { name: 'e1', socket: '/var/run/docker-e1.sock', host: '127.0.0.2' },
  { name: 'e2', socket: '/var/run/docker-e2.sock', host: '127.0.0.3' },
] as const;
/** The engine whose dockerd this suite SIGKILLs. */
const VICTIM = 'e2';

const mainEngine = await connectDocker();

/**
 * Starts (or finds) engines e1 and e2 with the shared script; it is idempotent, and restarts one that
 * died. A dockerd restarted after a SIGKILL cleans up its dead containers first, which on a loaded
 * machine outlasts the script's 30 s wait while the daemon keeps starting: asking again finds it up.
 */
async function startExtraEngines(): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await run('bash', [join(SHARED, 'env', 'extra-engines.sh'), '2'], { timeout: 180_000 });
      return;
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

interface Replica {
  port: number;
  process?: ChildProcess;
}

/**
 * Three engines and two control-plane replicas on one PostgreSQL: sandboxes spread over the
 * engines and answer through either replica's proxy; an engine whose dockerd is SIGKILLed turns
 * UNREACHABLE, its sandboxes say so and new ones go elsewhere; back, everything converges with each
 * sandbox still in the one container it was created in. Then the replica holding the leases is
 * SIGKILLed mid-burst, and the other converges every sandbox on the three engines.
 */
describe.runIf(mainEngine && process.env.DATABASE_URL)('a fleet of engines under two replicas', { timeout: 600_000 }, () => {
  const instanceId = `fleet-${randomBytes(4).toString('hex')}`;
  const specId = `${instanceId}-alive`;
  const replicas: Replica[] = [0, 1].map(() => ({ port: 0 }));
  const dockers = new Map(ENGINES.map((engine) => [engine.name, new Docker({ socketPath: engine.socket })]));
  /** Every sandbox the suite started and has not deleted, each wanted RUNNING unless the tests say otherwise. */
  const suiteSandboxes: string[] = [];
  let database: { url: string; drop(): Promise<void> };

  const call = controlPlaneCaller(KEY);

  const [a, b] = replicas as [Replica, Replica];

  async function startSandboxes(count: number): Promise<{ id: string; engine: string }[]> {
    const started = [];
    for (let i = 0; i < count; i++) {
      const { status, body } = await call(replicas[i % 2] as Replica, 'POST', '/api/v1/sandboxes', { sandbox_spec_id: specId }, SandboxInfoSchema);
      expect(status).toBe(200);
      started.push({ id: body.id, engine: body.engine });
    }
    return started;
  }

  async function sandboxes(replica: Replica, ids: string[]): Promise<SandboxInfo[]> {
    const { body } = await call(replica, 'GET', `/api/v1/sandboxes?${ids.map((id) => `id=${id}`).join('&')}`, undefined, z.array(SandboxInfoSchema));
    return body;
  }

  async function engines(replica: Replica): Promise<Record<string, EngineInfo>> {
    const { body } = await call(replica, 'GET', '/api/v1/engines', undefined, EnginePageSchema);
    return Object.fromEntries(body.items.map((engine) => [engine.name, engine]));
  }

  /** Each sandbox answers /alive through the proxy of each replica. */
  async function answerThroughEveryReplica(ids: string[]): Promise<void> {
    for (const replica of replicas) {
      for (const id of ids) {
        await vi.waitFor(async () => expect((await call(replica, 'GET', `/api/v1/sandboxes/${id}/agent/alive`)).status).toBe(200), WAIT);
      }
    }
  }

  /** The leases a replica holds, from its /metrics. */
  async function leasesHeld(replica: Replica): Promise<string[]> {
    return [...(await call(replica, 'GET', '/metrics')).text.matchAll(/^sandbox_server_lease_held\{lease="([^"]+)"\} 1$/gm)].map((match) => match[1] as string);
  }

  /**
   * Counts `create` events of this suite's containers, by sandbox, on every engine, from now until
   * `stop()`: a sandbox created twice (even if the extra container was removed again) shows 2.
   */
  async function countCreates(): Promise<{ bySandbox: Map<string, number>; stop(): void }> {
    const bySandbox = new Map<string, number>();
    const streams = await Promise.all(
      [...dockers.values()].map((docker) => docker.getEvents({ filters: { type: ['container'], event: ['create'], label: [`${LABEL_INSTANCE}=${instanceId}`] } })),
    );
    for (const stream of streams) {
      stream.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
          const sandboxId = (JSON.parse(line) as { Actor?: { Attributes?: Record<string, string> } }).Actor?.Attributes?.[LABEL_SANDBOX_ID];
          if (sandboxId) bySandbox.set(sandboxId, (bySandbox.get(sandboxId) ?? 0) + 1);
        }
      });
    }
    return { bySandbox, stop: () => streams.forEach((stream) => (stream as unknown as { destroy(): void }).destroy()) };
  }

  /** Our containers on every engine, by sandbox. */
  async function containersBySandbox(): Promise<Map<string, string[]>> {
    const bySandbox = new Map<string, string[]>();
    for (const docker of dockers.values()) {
      const containers = await docker.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${instanceId}`] } });
      for (const container of containers) {
        const sandboxId = container.Labels[LABEL_SANDBOX_ID] ?? '';
        bySandbox.set(sandboxId, [...(bySandbox.get(sandboxId) ?? []), container.Id]);
      }
    }
    return bySandbox;
  }

  beforeAll(async () => {
    await ensureBuilt();
    await startExtraEngines();
    database = await createTestDatabase();
    const env = {
      DATABASE_URL: database.url,
      SANDBOX_SERVER_API_KEYS: KEY,
      SANDBOX_SERVER_INSTANCE: instanceId,
      SANDBOX_WARM_POOL: '0',
      DOCKER_ENGINES: ENGINES.map((engine) => `${engine.name}=unix://${engine.socket}@${engine.host}`).join(','),
    };
    // Asked for here rather than drawn at random: a random one may be a port some connection already holds.
    for (const replica of replicas) replica.port = await freePort();
    // One after the other, so that the database is migrated once.
    a.process = await spawnControlPlane(a.port, env);
    b.process = await spawnControlPlane(b.port, env);
    const created = await call(a, 'POST', '/api/v1/sandbox-specs', { id: specId, image: TEST_BASE_IMAGE, command: ALIVE_SERVER_COMMAND });
    expect(created.status).toBe(201);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => killProcess(replica.process)));
    await startExtraEngines().catch(() => undefined);
    for (const docker of dockers.values()) await removeInstanceResources(docker, instanceId).catch(() => undefined);
    await database?.drop();
  }, 180_000);

  it('spreads sandboxes over the engines; an engine killed is flagged and skipped, and converges back without recreating anything', async () => {
    // Spread: least loaded first, so two on each engine, published on each engine's own address.
    const first = await startSandboxes(6);
    expect(first.map((s) => s.engine).sort()).toEqual(['e1', 'e1', 'e2', 'e2', 'main', 'main']);
    const ids = first.map((s) => s.id);
    await vi.waitFor(async () => expect((await sandboxes(b, ids)).map((s) => s.status)).toEqual(ids.map(() => 'RUNNING')), WAIT);
    for (const info of await sandboxes(a, ids)) {
      const host = ENGINES.find((engine) => engine.name === info.engine)?.host;
      expect(info.exposed_urls?.[0]?.url).toMatch(new RegExp(`^http://${host!.replaceAll('.', '\\.')}:\\d+$`));
    }
    await answerThroughEveryReplica(ids);
    await vi.waitFor(async () => {
      const seen = await engines(a);
      expect(Object.values(seen).map((engine) => [engine.name, engine.health, engine.sandboxes])).toEqual([
        ['e1', 'HEALTHY', 2],
        ['e2', 'HEALTHY', 2],
        ['main', 'HEALTHY', 2],
      ]);
    }, WAIT);
    const containersBefore = await containersBySandbox();
    expect([...containersBefore.values()].map((containers) => containers.length)).toEqual(ids.map(() => 1));

    // SIGKILL of the victim's dockerd: UNREACHABLE on both replicas, its sandboxes say so, new ones go elsewhere.
    const victimIds = first.filter((s) => s.engine === VICTIM).map((s) => s.id);
    process.kill(Number((await readFile(`/var/run/docker-${VICTIM}.pid`, 'utf8')).trim()), 'SIGKILL');
    for (const replica of replicas) {
      await vi.waitFor(async () => expect((await engines(replica))[VICTIM]?.health).toBe('UNREACHABLE'), WAIT);
      expect((await call(replica, 'GET', '/metrics')).text).toMatch(new RegExp(`^sandbox_server_engine_up\\{engine="${VICTIM}"\\} 0$`, 'm'));
    }
    for (const info of await sandboxes(b, victimIds)) {
      expect(info.status_detail).toMatch(new RegExp(`^its engine ${VICTIM} is unreachable`));
    }
    const elsewhere = await startSandboxes(2);
    expect(elsewhere.map((s) => s.engine).sort()).toEqual(['e1', 'main']);
    const events = await call(a, 'GET', '/api/v1/events/search?type=engine.unreachable', undefined, LifecycleEventPageSchema);
    expect(events.body.items.map((event) => event.subject_id)).toEqual([VICTIM]);

    // Back: healthy again, every sandbox RUNNING and answering, each still in its one container.
    await startExtraEngines();
    await vi.waitFor(async () => expect((await engines(b))[VICTIM]?.health).toBe('HEALTHY'), WAIT);
    const all = [...ids, ...elsewhere.map((s) => s.id)];
    await vi.waitFor(async () => expect((await sandboxes(a, all)).map((s) => [s.status, s.status_detail])).toEqual(all.map(() => ['RUNNING', null])), WAIT);
    await answerThroughEveryReplica(victimIds);
    suiteSandboxes.push(...all);
    const containersAfter = await containersBySandbox();
    for (const id of ids) expect(containersAfter.get(id)).toEqual(containersBefore.get(id));
    expect([...containersAfter.values()].map((containers) => containers.length)).toEqual(all.map(() => 1));
    const back = await call(b, 'GET', '/api/v1/events/search?type=engine.healthy', undefined, LifecycleEventPageSchema);
    expect(back.body.items.map((event) => event.subject_id)).toEqual([VICTIM]);
    console.log(`fleet: ${all.length} sandboxes on 3 engines; ${VICTIM} SIGKILLed and restarted; 0 recreated, ${[...containersAfter.values()].flat().length} containers`);
  });

  it('converges every sandbox on the three engines when the replica holding the leases is SIGKILLed mid-burst: 0 orphans, 0 double creates', async () => {
    // The replica holding control-plane (the first started took every lease, though a renewal late
    // under load may have let the other take one) is the one to kill; the other must end with all.
    const everyLease = ['control-plane', ...ENGINES.map((engine) => `reconciler/${engine.name}`)].sort();
    const holding = await Promise.all(replicas.map(async (replica) => ({ replica, leases: await leasesHeld(replica) })));
    const leader = holding.find((h) => h.leases.includes('control-plane'));
    expect(leader?.leases.some((lease) => lease.startsWith('reconciler/'))).toBe(true);
    const survivor = replicas.find((replica) => replica !== leader?.replica) as Replica;
    const creates = await countCreates();
    try {
      // Half the burst through each replica, changes of earlier sandboxes through the survivor, then
      // the kill while they are being made, and the rest of the burst through the survivor.
      const burst = await startSandboxes(6);
      const [paused, deleted] = suiteSandboxes.splice(0, 2) as [string, string];
      expect((await call(survivor, 'POST', `/api/v1/sandboxes/${paused}/pause`)).status).toBe(200);
      expect((await call(survivor, 'DELETE', `/api/v1/sandboxes/${deleted}`)).status).toBe(200);
      await killProcess(leader?.replica.process);
      const killedAt = performance.now();
      for (let i = 0; i < 3; i++) {
        const { status, body } = await call(survivor, 'POST', '/api/v1/sandboxes', { sandbox_spec_id: specId }, SandboxInfoSchema);
        expect(status).toBe(200);
        burst.push({ id: body.id, engine: body.engine });
      }
      expect(new Set(burst.map((s) => s.engine))).toEqual(new Set(ENGINES.map((engine) => engine.name)));
      await vi.waitFor(async () => expect((await leasesHeld(survivor)).sort()).toEqual(everyLease), WAIT);
      const takeoverMs = Math.round(performance.now() - killedAt);

      const running = [...suiteSandboxes, ...burst.map((s) => s.id)];
      await vi.waitFor(async () => {
        expect((await sandboxes(survivor, running)).map((s) => s.status)).toEqual(running.map(() => 'RUNNING'));
        expect((await sandboxes(survivor, [paused])).map((s) => s.status)).toEqual(['PAUSED']);
        expect((await containersBySandbox()).has(deleted)).toBe(false);
      }, WAIT);
      // Past the orphan grace, so that a leaked container would have been seen and removed by now.
      await sleep(3_000);
      const containers = await containersBySandbox();
      const known = [...running, paused];
      const tally = {
        sandboxes: known.length,
        withOneContainer: known.filter((id) => containers.get(id)?.length === 1).length,
        orphans: [...containers.keys()].filter((id) => !known.includes(id)).length,
        doubleCreates: [...creates.bySandbox.values()].filter((count) => count > 1).length,
        burstCreates: burst.filter((s) => creates.bySandbox.get(s.id) === 1).length,
      };
      console.log(`fleet: the replica holding ${leader?.leases.length} leases SIGKILLed mid-burst; the other held them after ${takeoverMs} ms (lease 6 s),`, JSON.stringify(tally));
      expect(tally).toEqual({ sandboxes: known.length, withOneContainer: known.length, orphans: 0, doubleCreates: 0, burstCreates: burst.length });
    } finally {
      creates.stop();
    }
  });
});
