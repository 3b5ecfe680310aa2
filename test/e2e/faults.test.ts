import { type ChildProcess, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { LifecycleEventPageSchema } from '../../src/sandbox-server/models/lifecycle-event.js';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { LABEL_INSTANCE, LABEL_SANDBOX_ID } from '../../src/sandbox-server/runtime/runtime.js';
import { checked } from '../helpers/answer.js';
import { ensureBuilt } from '../helpers/build.js';
import { controlPlaneCaller, killProcess, spawnControlPlane } from '../helpers/control-plane-process.js';
import { ALIVE_SERVER_COMMAND, connectDocker, removeInstanceResources, TEST_BASE_IMAGE } from '../helpers/docker.js';
import { type OwnPostgres, startOwnPostgres } from '../helpers/own-postgres.js';
import { freePort } from '../helpers/processes.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const SHARED = process.env.SHARED_DIR ?? join(ROOT, '..', 'shared');
/** Engine e3 (e1 and e2 are the fleet tests'): this suite restarts it, never the machine's main engine. */
const ENGINE = 'docker-e3';
const SOCKET = `/var/run/${ENGINE}.sock`;
const KEY = 'faults-test-key-0123456789';
const KILL_ROUNDS = 3;
const SANDBOXES_PER_ROUND = 4;
/** The control plane's database deadline here (DATABASE_QUERY_TIMEOUT_SECONDS). */
const QUERY_TIMEOUT_SECONDS = 3;
/** A request that has not answered after this long counts as hung: far past the deadline above. */
const HANG_MS = 30_000;

const mainEngine = await connectDocker();

/** Starts (or finds) engine e3 with the shared script; it is idempotent. */
async function startEngine(): Promise<void> {
  await run('bash', [join(SHARED, 'env', 'extra-engines.sh'), '3'], { timeout: 180_000 });
}

/** Stops engine e3 the way a restart does (SIGTERM: it stops its containers, then exits). */
async function stopEngine(): Promise<void> {
  const pid = Number((await readFile(`/var/run/${ENGINE}.pid`, 'utf8')).trim());
  process.kill(pid, 'SIGTERM');
  await vi.waitFor(
    () => {
      expect(() => process.kill(pid, 0)).toThrow();
    },
    { timeout: 60_000, interval: 200 },
  );
}

interface Tally {
  [outcome: string]: number;
}

/**
 * The control plane's reactions to its own death and to its dependencies going away, against a
 * PostgreSQL cluster and a Docker engine of this suite's own. Each test prints its tallies.
 */
describe.runIf(mainEngine)('faults under the control plane', { timeout: 300_000 }, () => {
  const engine = new Docker({ socketPath: SOCKET });
  const instanceId = `faults-${randomBytes(4).toString('hex')}`;
  const specId = `${instanceId}-alive`;
  let pg: OwnPostgres;
  let port: number;
  let controlPlane: ChildProcess | undefined;
  const sandboxIds: string[] = [];
  const createsBySandbox = new Map<string, number>();
  let events: NodeJS.ReadableStream | undefined;

  const callPort = controlPlaneCaller(KEY, HANG_MS);
  const call = (method: string, path: string, body?: unknown) => callPort({ port }, method, path, body);

  async function startControlPlane(): Promise<void> {
    controlPlane = await spawnControlPlane(port, {
      DATABASE_URL: pg.url,
      DATABASE_QUERY_TIMEOUT_SECONDS: String(QUERY_TIMEOUT_SECONDS),
      DOCKER_HOST: `unix://${SOCKET}`,
      SANDBOX_SERVER_API_KEYS: KEY,
      SANDBOX_SERVER_INSTANCE: instanceId,
    });
  }

  const killControlPlane = () => killProcess(controlPlane);

  async function statuses(ids: string[]): Promise<string[]> {
    const { body } = await callPort({ port }, 'GET', `/api/v1/sandboxes?${ids.map((id) => `id=${id}`).join('&')}`, undefined, z.array(SandboxInfoSchema.nullable()));
    return body.map((info) => info?.status ?? 'gone');
  }

  async function allRunning(ids: string[]): Promise<void> {
    await vi.waitFor(async () => expect(new Set(await statuses(ids))).toEqual(new Set(['RUNNING'])), { timeout: 120_000, interval: 250 });
  }

  /**
   * Runs `during` while workers send requests, tallying each answer by status (or "hung"); also
   * when the last answer other than a 200 came.
   */
  async function underLoad(
    paths: string[],
    during: () => Promise<void>,
  ): Promise<{ tally: Tally; answers503: { body: unknown; retryAfter: string | null }[]; lastFailureAt: number }> {
    const tally: Tally = {};
    const answers503: { body: unknown; retryAfter: string | null }[] = [];
    let lastFailureAt = 0;
    let done = false;
    const worker = async (offset: number) => {
      for (let i = offset; !done; i++) {
        let outcome: string;
        try {
          const answer = await call('GET', paths[i % paths.length] as string);
          outcome = String(answer.status);
          if (answer.status === 503 && answers503.length < 3) answers503.push({ body: answer.body, retryAfter: answer.headers.get('retry-after') });
        } catch (error) {
          outcome = (error as Error).name === 'TimeoutError' ? 'hung' : `failed: ${(error as Error).message}`;
        }
        tally[outcome] = (tally[outcome] ?? 0) + 1;
        if (outcome !== '200') lastFailureAt = Date.now();
        await sleep(20);
      }
    };
    const workers = [0, 1, 2, 3].map(worker);
    try {
      await during();
    } finally {
      done = true;
      await Promise.all(workers);
    }
    return { tally, answers503, lastFailureAt };
  }

  beforeAll(async () => {
    await Promise.all([ensureBuilt(), startEngine()]);
    pg = await startOwnPostgres();
    port = await freePort();
    events = await engine.getEvents({ filters: { type: ['container'], event: ['create'], label: [`${LABEL_INSTANCE}=${instanceId}`] } });
    events.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        const sandboxId = (JSON.parse(line) as { Actor?: { Attributes?: Record<string, string> } }).Actor?.Attributes?.[LABEL_SANDBOX_ID];
        if (sandboxId) createsBySandbox.set(sandboxId, (createsBySandbox.get(sandboxId) ?? 0) + 1);
      }
    });
    await startControlPlane();
    const created = await call('POST', '/api/v1/sandbox-specs', { id: specId, image: TEST_BASE_IMAGE, command: ALIVE_SERVER_COMMAND });
    expect(created.status).toBe(201);
  }, 300_000);

  afterAll(async () => {
    (events as { destroy?: () => void } | undefined)?.destroy?.();
    await killControlPlane();
    await removeInstanceResources(engine, instanceId).catch(() => undefined);
    await pg?.destroy();
  }, 120_000);

  it('accounts for every sandbox across SIGKILLs of the control plane while they start: no orphan, no double create', async () => {
    for (let round = 0; round < KILL_ROUNDS; round++) {
      for (let i = 0; i < SANDBOXES_PER_ROUND; i++) {
        const { status, body } = await call('POST', '/api/v1/sandboxes', { sandbox_spec_id: specId });
        expect(status).toBe(200);
        sandboxIds.push(checked(SandboxInfoSchema, body).id);
      }
      await sleep(100 + Math.floor(Math.random() * 1_000));
      await killControlPlane();
      await startControlPlane();
    }
    await allRunning(sandboxIds);
    // Past the orphan grace, so that a leaked container would have been seen and removed by now.
    await sleep(3_000);

    const containers = await engine.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${instanceId}`] } });
    const perSandbox = sandboxIds.map((id) => containers.filter((c) => c.Labels[LABEL_SANDBOX_ID] === id).length);
    const tally = {
      sandboxes: sandboxIds.length,
      running: (await statuses(sandboxIds)).filter((status) => status === 'RUNNING').length,
      withOneContainer: perSandbox.filter((count) => count === 1).length,
      orphans: containers.filter((c) => !sandboxIds.includes(c.Labels[LABEL_SANDBOX_ID] ?? '')).length,
      doubleCreates: [...createsBySandbox.values()].filter((count) => count > 1).length,
    };
    console.log(`control plane SIGKILLed ${KILL_ROUNDS} times while sandboxes started:`, JSON.stringify(tally));
    expect(tally).toEqual({ sandboxes: tally.sandboxes, running: tally.sandboxes, withOneContainer: tally.sandboxes, orphans: 0, doubleCreates: 0 });
  });

  it('answers every request (200 or 503, none hangs) while PostgreSQL restarts, and recovers without a restart of its own', async () => {
    let restartedAt = 0;
    const { tally, answers503, lastFailureAt } = await underLoad(['/api/v1/sandboxes/search?limit=5', `/api/v1/sandbox-specs?id=${specId}`, '/health'], async () => {
      await sleep(500);
      await pg.stop();
      await sleep(2_000);
      await pg.start();
      restartedAt = Date.now();
      await sleep(500);
    });
    const answered = Object.entries(tally)
      .filter(([outcome]) => /^\d+$/.test(outcome))
      .reduce((sum, [, count]) => sum + count, 0);
    console.log(
      'PostgreSQL restarted under load, answers by status:',
      JSON.stringify({ ...tally, answered, hung: tally['hung'] ?? 0, lastFailureMsAfterRestart: Math.max(0, lastFailureAt - restartedAt) }),
    );
    // A query on a connection that died can stay pending in postgres.js (porsager/postgres#1193); the
    // database client's deadline turns it into a 503, so every request gets an answer.
    expect(Object.keys(tally).sort()).toEqual(['200', '503']);
    for (const answer of answers503) expect(answer).toEqual({ body: { detail: expect.any(String) }, retryAfter: '1' });

    await vi.waitFor(async () => expect((await call('GET', '/api/v1/sandboxes/search?limit=1')).status).toBe(200), { timeout: 30_000 });
    const { body } = await call('POST', '/api/v1/sandboxes', { sandbox_spec_id: specId });
    sandboxIds.push(checked(SandboxInfoSchema, body).id);
    await allRunning(sandboxIds);
  });

  it('brings every sandbox back to RUNNING after dockerd restarts, answering requests all along (never a 500 or a hang)', async () => {
    const before = await engine.listContainers({ filters: { label: [`${LABEL_INSTANCE}=${instanceId}`] } });
    const restartBegan = new Date().toISOString();
    // The proxy: a 503 with Retry-After while the engine is away (not a 502, which says the
    // sandbox's own agent-server failed), and the agent-server's answer again once it is back.
    const proxied = `/api/v1/sandboxes/${sandboxIds[0]}/agent/alive`;
    expect((await call('GET', proxied)).status).toBe(200);
    const proxiedWhileAway: Tally = {};
    let startedDuring = '';
    const { tally } = await underLoad(['/api/v1/sandboxes/search?limit=5', '/health'], async () => {
      await stopEngine();
      await vi.waitFor(
        async () => {
          const answer = await call('GET', proxied);
          proxiedWhileAway[answer.status] = (proxiedWhileAway[answer.status] ?? 0) + 1;
          expect({ status: answer.status, body: answer.body, retryAfter: answer.headers.get('retry-after') }).toEqual({
            status: 503,
            body: { detail: expect.stringContaining('container engine is unavailable') },
            retryAfter: '5',
          });
        },
        { timeout: 60_000, interval: 250 },
      );
      startedDuring = checked(SandboxInfoSchema, (await call('POST', '/api/v1/sandboxes', { sandbox_spec_id: specId })).body).id;
      await startEngine();
    });
    sandboxIds.push(startedDuring);
    console.log('dockerd restarted under load, answers by status:', JSON.stringify(tally), 'proxied while it was away:', JSON.stringify(proxiedWhileAway));
    // The API does not need the engine; a 503 can only be a database connection the previous test
    // left broken, retried on the next request.
    expect(Object.keys(tally).filter((outcome) => outcome !== '503')).toEqual(['200']);

    await allRunning(sandboxIds);
    await vi.waitFor(async () => expect((await call('GET', proxied)).status).toBe(200), { timeout: 60_000, interval: 250 });
    const after = await engine.listContainers({ filters: { label: [`${LABEL_INSTANCE}=${instanceId}`] } });
    const restarted = before.filter((c) => after.some((a) => a.Id === c.Id)).length;
    console.log('after dockerd restart:', JSON.stringify({ runningBefore: before.length, startedAgain: restarted, runningAfter: after.length }));
    expect(restarted).toBe(before.length);
    expect(after).toHaveLength(sandboxIds.length);
    // The engine stopped their containers; none of them failed, so none was ever said to (no
    // sandbox.error or sandbox.missing reached the API, streams or webhooks in between).
    const said = await call('GET', `/api/v1/events/search?type=sandbox.error&type=sandbox.missing&timestamp__gte=${encodeURIComponent(restartBegan)}&limit=100`);
    expect(checked(LifecycleEventPageSchema, said.body).items.map((event) => [event.type, event.sandbox_id, event.status_detail])).toEqual([]);
  });
});
