import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { Registry } from 'prom-client';
import { createSandboxMetrics } from '../../../src/http/metrics/index.js';
import { adoptedInstallations, engines, lifecycleEvents, type SandboxRow, sandboxes, sandboxSpecs } from '../../../src/sandbox-server/db/schema.js';
import { recordEngineHealth } from '../../../src/sandbox-server/reconciler/record-engine-health.js';
import { applyPolicies, Reconciler, type ReconcilerOptions } from '../../../src/sandbox-server/reconciler/index.js';
import { dataVolumeNameFor, networkNameFor } from '../../../src/sandbox-server/runtime/resource-names.js';
import { createFakeRuntime, type FakeRuntime } from '../../helpers/fake-runtime.js';
import { sessionKeyDigest } from '../../../src/contracts/agent-server/session-key-digest.js';
import { RuntimeError, type SandboxRuntime } from '../../../src/sandbox-server/runtime/index.js';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';
import { insertSandbox, insertSpec, readSandbox, setDesired, startIdleReportingAgentServer } from './fixtures.js';

describe.each(testDrivers)('Reconciler against the fake runtime (%s)', (driver) => {
  let handle: DatabaseHandle;
  let fake: FakeRuntime;
  const reconcilers: Reconciler[] = [];

  beforeAll(async () => {
    handle = await openTestDatabase(driver);
  });
  afterAll(async () => {
    await handle?.close();
  });
  beforeEach(async () => {
    fake = createFakeRuntime();
    await handle.db.delete(sandboxes);
    await handle.db.delete(sandboxSpecs);
  });
  afterEach(async () => {
    await Promise.all(reconcilers.splice(0).map((r) => r.stop()));
  });

  function reconciler(options: Partial<ReconcilerOptions> = {}): Reconciler {
    const created = new Reconciler({ db: handle.db, runtime: fake, instanceId: 'test', checkAlive: async () => true, ...options });
    reconcilers.push(created);
    return created;
  }

  /** Passes until nothing is in flight: creates run in the background and land between passes. */
  async function passes(r: Reconciler, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      await r.reconcileOnce();
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  const changes = () => fake.calls.filter((c) => c.verb !== 'inspect' && !c.verb.startsWith('list'));
  const callsOf = (verb: string) => fake.calls.filter((c) => c.verb === verb);

  async function newSandbox(values: Partial<typeof sandboxes.$inferInsert> = {}, specValues = {}): Promise<SandboxRow> {
    const spec = await insertSpec(handle.db, specValues);
    return insertSandbox(handle.db, spec.id, values);
  }

  it('creates one container, reports RUNNING once alive, and later passes change nothing', async () => {
    const sandbox = await newSandbox();
    const r = reconciler();

    await passes(r, 2);

    const row = await readSandbox(handle.db, sandbox.id);
    const [container] = fake.containers();
    expect(row).toMatchObject({ status: 'RUNNING', statusDetail: null, containerId: container?.containerId });
    expect(row.hostPorts).toEqual(container?.hostPorts);
    expect(fake.volumes()).toEqual([dataVolumeNameFor(sandbox.id)]);

    const changesBefore = changes().length;
    await passes(r, 5);
    expect(changes()).toHaveLength(changesBefore);
    expect(await readSandbox(handle.db, sandbox.id)).toEqual(row);
  });

  it('passes the spec env to the container with the digest of the session key, never the key itself', async () => {
    const requests: Parameters<SandboxRuntime['create']>[0][] = [];
    const recording: SandboxRuntime = { ...fake, create: (request) => (requests.push(request), fake.create(request)) };
    // A spec cannot set the digest: the sandbox's own wins.
    const sandbox = await newSandbox({}, { initialEnv: { FOO: 'bar', SESSION_API_KEY_SHA256: 'f'.repeat(64) }, cpus: 1.5, memoryMb: 512, pidsLimit: 256 });

    await passes(reconciler({ runtime: recording, dataMountPath: '/srv/data' }), 1);

    expect(requests).toEqual([
      expect.objectContaining({
        sandboxId: sandbox.id,
        env: { SESSION_API_KEY_SHA256: createHash('sha256').update(sandbox.sessionApiKey).digest('hex'), AGENT_SERVER_DATA_OWNER: sandbox.id },
        initialEnv: { FOO: 'bar' },
        cpus: 1.5,
        memoryMb: 512,
        pidsLimit: 256,
        dataVolume: { name: dataVolumeNameFor(sandbox.id), mountPath: '/srv/data' },
      }),
    ]);
    expect(JSON.stringify(requests)).not.toContain(sandbox.sessionApiKey);
  });

  it('stays STARTING until the agent-server answers /alive', async () => {
    let alive = false;
    const sandbox = await newSandbox();
    const r = reconciler({ checkAlive: async () => alive });

    await passes(r, 3);
    expect(await readSandbox(handle.db, sandbox.id)).toMatchObject({ status: 'STARTING', statusDetail: expect.stringContaining('/alive') });

    alive = true;
    await passes(r, 1);
    expect((await readSandbox(handle.db, sandbox.id)).status).toBe('RUNNING');
  });

  it('takes the answer of the probe that saw the agent-server come up as the pass\'s observation, without asking again', async () => {
    let up = false;
    let answered = 0;
    const sandbox = await newSandbox();
    // Once up, the agent-server answers a single ask: a pass asking again would find it gone.
    const r = reconciler({ checkAlive: async () => up && ++answered === 1 });
    await r.start();
    await vi.waitFor(async () => expect(await readSandbox(handle.db, sandbox.id)).toMatchObject({ statusDetail: expect.stringContaining('/alive') }), {
      timeout: 10_000,
    });

    up = true;
    await vi.waitFor(async () => expect((await readSandbox(handle.db, sandbox.id)).status).toBe('RUNNING'), { timeout: 10_000 });
    expect(answered).toBe(1);
  });

  it('lists only the kicked sandbox\'s containers in a pass over it, and every container in a sweep', async () => {
    const sandbox = await newSandbox();
    const other = await newSandbox();
    const r = reconciler();
    await r.start();
    await vi.waitFor(async () => expect((await readSandbox(handle.db, other.id)).status).toBe('RUNNING'), { timeout: 10_000 });
    await vi.waitFor(async () => expect((await readSandbox(handle.db, sandbox.id)).status).toBe('RUNNING'), { timeout: 10_000 });
    const listed = callsOf('list').length;

    r.kick(sandbox.id);
    await vi.waitFor(() => expect(callsOf('list').slice(listed)).toContainEqual({ verb: 'list', target: sandbox.id }), { timeout: 10_000 });
    expect(callsOf('list').slice(listed).map((c) => c.target)).not.toContain(other.id);
    r.kick();
    await vi.waitFor(() => expect(callsOf('list').slice(listed)).toContainEqual({ verb: 'list', target: '' }), { timeout: 10_000 });
  });

  it('inspects a container after its die, but not after its create and start: an inspect waits for a container being started', async () => {
    const sandbox = await newSandbox();
    const r = reconciler();
    await r.start();
    await vi.waitFor(async () => expect((await readSandbox(handle.db, sandbox.id)).status).toBe('RUNNING'), { timeout: 10_000 });
    const [container] = fake.containers();
    expect(callsOf('inspect')).toEqual([]);

    fake.kill(container!.containerId);
    await vi.waitFor(() => expect(callsOf('inspect')).toContainEqual({ verb: 'inspect', target: container!.containerId }), { timeout: 10_000 });
  });

  it('asks /alive on the published loopback port with the sandbox key', async () => {
    const asked: [string, string][] = [];
    const sandbox = await newSandbox();

    await passes(reconciler({ checkAlive: async (url, key) => (asked.push([url, key]), true) }), 2);

    const port = fake.containers()[0]?.hostPorts.AGENT_SERVER;
    expect(asked).toEqual([[`http://127.0.0.1:${port}`, sandbox.sessionApiKey]]);
  });

  it('pauses, resumes and deletes, removing the volume and finishing the row; a deleted sandbox is never recreated', async () => {
    const sandbox = await newSandbox();
    const r = reconciler();
    await passes(r, 2);

    await setDesired(handle.db, sandbox.id, 'PAUSED');
    await passes(r, 1);
    expect(fake.containers()[0]?.state).toBe('paused');
    expect((await readSandbox(handle.db, sandbox.id)).status).toBe('PAUSED');

    await setDesired(handle.db, sandbox.id, 'RUNNING');
    await passes(r, 1);
    expect(fake.containers()[0]?.state).toBe('running');
    expect((await readSandbox(handle.db, sandbox.id)).status).toBe('RUNNING');

    expect(fake.networks()).toEqual([{ name: networkNameFor(sandbox.id), sandboxId: sandbox.id }]);
    await setDesired(handle.db, sandbox.id, 'DELETED');
    await passes(r, 1);
    expect(fake.containers()).toEqual([]);
    expect(fake.volumes()).toEqual([]);
    expect(fake.networks()).toEqual([]);
    const row = await readSandbox(handle.db, sandbox.id);
    expect(row.deletedAt).toBeInstanceOf(Date);
    expect(row.status).toBe('MISSING');

    await passes(r, 3);
    expect(callsOf('create')).toHaveLength(1);
  });

  it('sees a sandbox paused while RUNNING RUNNING again as soon as it is unpaused, without asking /alive; one paused before it answered is asked', async () => {
    let asked = 0;
    let alive = true;
    const r = reconciler({ checkAlive: async () => (asked++, alive) });
    const answered = await newSandbox();
    await passes(r, 2);
    expect((await readSandbox(handle.db, answered.id)).status).toBe('RUNNING');
    await setDesired(handle.db, answered.id, 'PAUSED');
    await passes(r, 1);
    await setDesired(handle.db, answered.id, 'RUNNING');
    const askedBefore = asked;
    await passes(r, 1);
    expect((await readSandbox(handle.db, answered.id)).status).toBe('RUNNING');
    expect(asked).toBe(askedBefore);

    alive = false;
    const starting = await newSandbox();
    await passes(r, 2);
    expect((await readSandbox(handle.db, starting.id)).status).toBe('STARTING');
    await setDesired(handle.db, starting.id, 'PAUSED');
    await passes(r, 1);
    expect((await readSandbox(handle.db, starting.id)).status).toBe('PAUSED');
    await setDesired(handle.db, starting.id, 'RUNNING');
    await passes(r, 1);
    expect((await readSandbox(handle.db, starting.id)).status).toBe('STARTING');
    alive = true;
    await passes(r, 1);
    expect((await readSandbox(handle.db, starting.id)).status).toBe('RUNNING');
  });

  it('adopts the containers it finds after a restart instead of creating them again', async () => {
    const crashedBeforeWrite = await newSandbox();
    const known = await newSandbox();
    const adopted = fake.addContainer(crashedBeforeWrite.id);
    const running = fake.addContainer(known.id);
    await handle.db.update(sandboxes).set({ status: 'RUNNING', containerId: running.containerId });

    await reconciler().start();

    expect(callsOf('create')).toEqual([]);
    expect(fake.containers()).toHaveLength(2);
    expect(await readSandbox(handle.db, crashedBeforeWrite.id)).toMatchObject({ status: 'RUNNING', containerId: adopted.containerId });
    expect(await readSandbox(handle.db, known.id)).toMatchObject({ status: 'RUNNING', containerId: running.containerId });
  });

  it('removes a container and a network no live row claims, with its volume, only after the grace period', async () => {
    const live = await newSandbox();
    const deleted = await newSandbox({ desiredState: 'DELETED', deletedAt: new Date() });
    fake.addContainer('no-such-sandbox');
    fake.addNetwork('no-such-sandbox');
    fake.addContainer(deleted.id);
    fake.addNetwork('network-only');

    const patient = reconciler({ orphanGraceMs: 60_000 });
    await passes(patient, 3);
    expect(fake.containers().map((c) => c.sandboxId).sort()).toEqual([deleted.id, live.id, 'no-such-sandbox'].sort());
    expect(fake.networks().map((n) => n.sandboxId).sort()).toEqual([live.id, 'network-only', 'no-such-sandbox'].sort());

    const eager = reconciler({ orphanGraceMs: 1 });
    await passes(eager, 1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await passes(eager, 1);
    expect(fake.containers().map((c) => c.sandboxId)).toEqual([live.id]);
    expect(callsOf('removeVolume').map((c) => c.target).sort()).toEqual([dataVolumeNameFor(deleted.id), dataVolumeNameFor('no-such-sandbox')].sort());
    // A network goes once its container has: in the same pass here, containers first.
    expect(fake.networks().map((n) => n.sandboxId)).toEqual([live.id]);
  });

  it("leaves another installation's leftovers alone and reports them, until this installation adopts them", async () => {
    // The fake runtime labels nothing with an installation: what it holds is a release before the label's.
    fake.addContainer('of-an-older-release');
    fake.addNetwork('of-an-older-release');
    fake.addVolume(dataVolumeNameFor('restored-by-an-older-release'), 'restored-by-an-older-release');
    const registry = new Registry();
    const eager = reconciler({ installationId: 'this-installation', orphanGraceMs: 1, metrics: createSandboxMetrics(registry) });
    await passes(eager, 1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await passes(eager, 2);
    expect(fake.containers().map((c) => c.sandboxId)).toEqual(['of-an-older-release']);
    expect(fake.networks().map((n) => n.sandboxId)).toEqual(['of-an-older-release']);
    expect(fake.volumes()).toEqual([dataVolumeNameFor('restored-by-an-older-release')]);
    const metrics = await registry.metrics();
    for (const kind of ['container', 'network', 'volume']) {
      expect(metrics).toContain(`sandbox_server_foreign_resources{engine="local",installation="legacy",kind="${kind}"} 1`);
    }

    await handle.db.insert(adoptedInstallations).values({ installation: 'legacy' });
    try {
      await passes(eager, 1);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await passes(eager, 1);
      expect(fake.containers()).toEqual([]);
      expect(fake.networks()).toEqual([]);
      expect(fake.volumes()).toEqual([]);
      expect(await registry.metrics()).not.toContain('installation="legacy"');
    } finally {
      await handle.db.delete(adoptedInstallations);
    }
  });

  it('removes data volumes no live row claims and volume copies that ended, only after the grace period', async () => {
    const live = await newSandbox({ desiredState: 'PAUSED' });
    // Restored from a snapshot for a sandbox whose row was never written (the control plane died).
    fake.addVolume(dataVolumeNameFor('never-written'), 'never-written');
    fake.addVolume(dataVolumeNameFor(live.id), live.id);
    const ended = fake.addVolumeCopy(false);
    const copying = fake.addVolumeCopy(true);

    await passes(reconciler({ orphanGraceMs: 60_000 }), 2);
    expect(fake.volumes().sort()).toEqual([dataVolumeNameFor('never-written'), dataVolumeNameFor(live.id)].sort());
    expect(fake.volumeCopies().sort()).toEqual([copying, ended].sort());

    const eager = reconciler({ orphanGraceMs: 1 });
    await passes(eager, 1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await passes(eager, 1);
    expect(fake.volumes()).toEqual([dataVolumeNameFor(live.id)]);
    expect(fake.volumeCopies()).toEqual([copying]);
  });

  it('turns a container removed behind its back MISSING and does not recreate it', async () => {
    const sandbox = await newSandbox();
    const r = reconciler();
    await passes(r, 2);
    const [container] = fake.containers();

    fake.removeBehindBack(container!.containerId);
    await passes(r, 3);

    expect(await readSandbox(handle.db, sandbox.id)).toMatchObject({
      status: 'MISSING',
      statusDetail: 'container was removed outside the control plane',
      containerId: container?.containerId,
      hostPorts: null,
    });
    expect(callsOf('create')).toHaveLength(1);
  });

  it('turns a container that died ERROR with its exit code, and does not restart it until paused and resumed', async () => {
    const sandbox = await newSandbox();
    const r = reconciler();
    await passes(r, 2);
    const containerId = fake.containers()[0]!.containerId;

    fake.kill(containerId, 137);
    await passes(r, 3);
    expect(await readSandbox(handle.db, sandbox.id)).toMatchObject({ status: 'ERROR', statusDetail: 'container exited with code 137' });
    expect(callsOf('start')).toEqual([]);

    await setDesired(handle.db, sandbox.id, 'PAUSED');
    await passes(r, 1);
    expect((await readSandbox(handle.db, sandbox.id)).status).toBe('PAUSED');
    await setDesired(handle.db, sandbox.id, 'RUNNING');
    await passes(r, 2);
    expect(await readSandbox(handle.db, sandbox.id)).toMatchObject({ status: 'RUNNING', containerId });
  });

  it('does not create twice while a create is in flight, and deletes only once it landed', async () => {
    const sandbox = await newSandbox();
    const release = fake.holdCreates();
    const r = reconciler();

    await passes(r, 3);
    expect(callsOf('create')).toHaveLength(1);
    expect((await readSandbox(handle.db, sandbox.id)).status).toBe('STARTING');

    await setDesired(handle.db, sandbox.id, 'DELETED');
    await passes(r, 2);
    expect((await readSandbox(handle.db, sandbox.id)).deletedAt).toBeNull();

    release();
    await r.stop();
    expect(fake.containers()).toHaveLength(1);
    await passes(r, 1);
    expect(fake.containers()).toEqual([]);
    expect((await readSandbox(handle.db, sandbox.id)).deletedAt).toBeInstanceOf(Date);
    expect(callsOf('create')).toHaveLength(1);
  });

  it('leaves a container its create has made but not yet started to that create, and starts it once', async () => {
    const sandbox = await newSandbox();
    const release = fake.holdCreates(true);
    const r = reconciler();

    await passes(r, 3);
    expect(fake.containers().map((c) => c.state)).toEqual(['created']);
    expect(callsOf('start')).toEqual([]);
    expect((await readSandbox(handle.db, sandbox.id)).status).toBe('STARTING');

    release();
    await r.stop();
    await passes(r, 2);
    expect((await readSandbox(handle.db, sandbox.id)).status).toBe('RUNNING');
    expect(callsOf('start')).toEqual([]);
    expect(callsOf('create')).toHaveLength(1);
  });

  it('records a final create failure as ERROR and stops trying', async () => {
    const sandbox = await newSandbox();
    fake.failNext('create', new RuntimeError('docker create failed: No such image: nope:latest', true));
    const r = reconciler();

    await passes(r, 4);

    expect(await readSandbox(handle.db, sandbox.id)).toMatchObject({ status: 'ERROR', statusDetail: 'docker create failed: No such image: nope:latest' });
    expect(callsOf('create')).toHaveLength(1);
  });

  it('backs off after a retryable failure and then succeeds', async () => {
    const sandbox = await newSandbox();
    fake.failNext('create', new RuntimeError('connect ECONNREFUSED /var/run/docker.sock', false));
    const r = reconciler();

    await passes(r, 3);
    expect(await readSandbox(handle.db, sandbox.id)).toMatchObject({ status: 'STARTING', statusDetail: expect.stringContaining('will retry') });
    expect(callsOf('create')).toHaveLength(1);

    await r.start();
    await vi.waitFor(async () => expect((await readSandbox(handle.db, sandbox.id)).status).toBe('RUNNING'), { timeout: 10_000 });
    expect(callsOf('create')).toHaveLength(2);
    expect(fake.containers()).toHaveLength(1);
  });

  it('replaces the container of a sandbox given a new restart generation, keeping its volume and passing its new key', async () => {
    const requests: Parameters<SandboxRuntime['create']>[0][] = [];
    const recording: SandboxRuntime = { ...fake, create: (request) => (requests.push(request), fake.create(request)) };
    const sandbox = await newSandbox();
    const r = reconciler({ runtime: recording });
    await passes(r, 2);
    const first = fake.containers()[0]!;
    fake.kill(first.containerId, 1);
    await passes(r, 1);
    expect((await readSandbox(handle.db, sandbox.id)).status).toBe('ERROR');

    await handle.db.update(sandboxes).set({ restartGeneration: 1, sessionApiKey: 'the-new-key' }).where(eq(sandboxes.id, sandbox.id));
    await passes(r, 3);

    const [second] = fake.containers();
    expect(second?.containerId).not.toBe(first.containerId);
    expect(await readSandbox(handle.db, sandbox.id)).toMatchObject({ status: 'RUNNING', containerId: second?.containerId, observedGeneration: 1 });
    expect(callsOf('removeVolume')).toEqual([]);
    expect(fake.volumes()).toEqual([dataVolumeNameFor(sandbox.id)]);
    expect(requests.map((request) => request.env['SESSION_API_KEY_SHA256'])).toEqual([sessionKeyDigest(sandbox.sessionApiKey), sessionKeyDigest('the-new-key')]);

    const changesBefore = changes().length;
    await passes(r, 3);
    expect(changes()).toHaveLength(changesBefore);
  });

  it('turns a sandbox whose agent-server never answers ERROR after the start timeout, with its last log lines, until it answers', async () => {
    let alive = false;
    const sandbox = await newSandbox();
    const r = reconciler({ checkAlive: async () => alive, startTimeoutMs: 200 });
    await passes(r, 2);
    fake.writeLog(fake.containers()[0]!.containerId, 'booting\nError: cannot listen on 8000\n');
    expect((await readSandbox(handle.db, sandbox.id)).status).toBe('STARTING');

    await new Promise((resolve) => setTimeout(resolve, 250));
    await passes(r, 1);
    const failed = await readSandbox(handle.db, sandbox.id);
    expect(failed.status).toBe('ERROR');
    expect(failed.statusDetail).toBe(
      'the agent-server did not answer /alive within 0 s (SANDBOX_START_TIMEOUT_SECONDS); its last log lines:\nbooting\nError: cannot listen on 8000',
    );
    await passes(r, 2);
    expect(await readSandbox(handle.db, sandbox.id)).toEqual(failed);

    alive = true;
    await passes(r, 1);
    expect((await readSandbox(handle.db, sandbox.id)).status).toBe('RUNNING');
  });

  it('starts again the containers its engine stopped when it went away, but not one that died on its own', async () => {
    const crashed = await newSandbox();
    const r = reconciler();
    await r.start();
    await vi.waitFor(async () => expect((await readSandbox(handle.db, crashed.id)).status).toBe('RUNNING'));
    // Long enough before the engine went away not to be its doing.
    fake.kill(fake.containers()[0]!.containerId, 137, false, Date.now() - 120_000);
    await vi.waitFor(async () => expect((await readSandbox(handle.db, crashed.id)).status).toBe('ERROR'));

    const stopped = await newSandbox();
    r.kick(stopped.id);
    await vi.waitFor(async () => expect((await readSandbox(handle.db, stopped.id)).status).toBe('RUNNING'));
    const container = fake.containers().find((c) => c.sandboxId === stopped.id)!;
    fake.kill(container.containerId, 143);
    fake.disconnect();

    await vi.waitFor(() => expect(callsOf('start').map((c) => c.target)).toEqual([container.containerId]));
    await vi.waitFor(async () => expect(await readSandbox(handle.db, stopped.id)).toMatchObject({ status: 'RUNNING', containerId: container.containerId }));
    expect((await readSandbox(handle.db, crashed.id)).status).toBe('ERROR');
  });

  it('takes the exits of an engine shutting down (it answers, but takes no new connection) for its doing, not crashes, and starts those containers again once it is back', async () => {
    await handle.db.delete(lifecycleEvents);
    const sandbox = await newSandbox();
    const healthReports: boolean[] = [];
    const r = reconciler({ onHealth: async (healthy) => void healthReports.push(healthy) });
    await r.start();
    await vi.waitFor(async () => expect((await readSandbox(handle.db, sandbox.id)).status).toBe('RUNNING'));
    const container = fake.containers()[0]!;

    // dockerd on SIGTERM: its listener closed, it stops the container (exit 143) and reports the
    // die on the event stream it still serves, and inspects still answer on pooled connections.
    fake.refuseNewConnections(true);
    fake.kill(container.containerId, 143);
    await vi.waitFor(() => expect(healthReports.at(-1)).toBe(false));
    expect(r.engineAvailable()).toBe(false);
    for (let i = 0; i < 3; i++) await r.reconcileOnce().catch(() => undefined);
    expect(await readSandbox(handle.db, sandbox.id)).toMatchObject({ status: 'RUNNING', containerId: container.containerId });
    expect(callsOf('start')).toEqual([]);

    // Back: the same container is started again, and no failure was ever recorded.
    fake.refuseNewConnections(false);
    await vi.waitFor(() => expect(callsOf('start').map((c) => c.target)).toEqual([container.containerId]), { timeout: 10_000 });
    await vi.waitFor(async () => expect(await readSandbox(handle.db, sandbox.id)).toMatchObject({ status: 'RUNNING', containerId: container.containerId }));
    const events = await handle.db.select().from(lifecycleEvents).where(eq(lifecycleEvents.subjectId, sandbox.id));
    expect(events.map((event) => event.status)).not.toContain('ERROR');
  });

  it('still marks ERROR a container that exits while the engine takes new connections', async () => {
    const sandbox = await newSandbox();
    const r = reconciler();
    await r.start();
    await vi.waitFor(async () => expect((await readSandbox(handle.db, sandbox.id)).status).toBe('RUNNING'));
    fake.kill(fake.containers()[0]!.containerId, 143);
    await vi.waitFor(async () => expect(await readSandbox(handle.db, sandbox.id)).toMatchObject({ status: 'ERROR', statusDetail: 'container exited with code 143' }));
    expect(r.engineAvailable()).toBe(true);
  });

  it('records its engine UNREACHABLE when it stops answering and HEALTHY when it answers again, each change with its event', async () => {
    // The fresh database's registration of `local` (engine.registered) is not this test's.
    await handle.db.delete(lifecycleEvents);
    const r = reconciler({ onHealth: (healthy, detail) => recordEngineHealth(handle.db, 'local', healthy, detail) });
    await r.start();
    const health = async () => (await handle.db.select().from(engines).where(eq(engines.name, 'local')))[0];
    await vi.waitFor(async () => expect(await health()).toMatchObject({ health: 'HEALTHY', healthDetail: null, lastSeenAt: expect.any(Date) }));

    fake.failNext('list', new RuntimeError('connect ENOENT /var/run/docker.sock', false));
    fake.disconnect();
    await vi.waitFor(async () => expect((await health())?.health).toBe('UNREACHABLE'));
    await vi.waitFor(async () => expect((await health())?.health).toBe('HEALTHY'), { timeout: 10_000 });

    const events = await handle.db.select().from(lifecycleEvents).where(eq(lifecycleEvents.subjectId, 'local'));
    expect(events.map((event) => [event.type, event.previousStatus, event.status])).toEqual([
      ['engine.unreachable', 'HEALTHY', 'UNREACHABLE'],
      ['engine.healthy', 'UNREACHABLE', 'HEALTHY'],
    ]);
    await handle.db.delete(lifecycleEvents);
    await handle.db.update(engines).set({ health: null, healthDetail: null, lastSeenAt: null });
  });

  it('reports two containers claiming one sandbox as ERROR and removes neither', async () => {
    const sandbox = await newSandbox();
    fake.addContainer(sandbox.id);
    fake.addContainer(sandbox.id);

    await passes(reconciler(), 2);

    expect(await readSandbox(handle.db, sandbox.id)).toMatchObject({ status: 'ERROR', statusDetail: expect.stringContaining('2 containers claim') });
    expect(fake.containers()).toHaveLength(2);
  });

  it('applies the idle and TTL policies in its sweeps', async () => {
    const idle = await newSandbox({ status: 'RUNNING', lastActiveAt: new Date(Date.now() - 120_000) }, { idlePauseSeconds: 60 });
    const expired = await newSandbox({ createdAt: new Date(Date.now() - 120_000) }, { ttlSeconds: 60 });
    fake.addContainer(idle.id);
    const r = reconciler();

    await passes(r, 2);

    expect(fake.containers().map((c) => [c.sandboxId, c.state])).toEqual([[idle.id, 'paused']]);
    expect(await readSandbox(handle.db, idle.id)).toMatchObject({ desiredState: 'PAUSED', status: 'PAUSED' });
    expect(await readSandbox(handle.db, expired.id)).toMatchObject({ desiredState: 'DELETED', deletedAt: expect.any(Date) });
  });

  it('gives each of 50 sandboxes started at once exactly one container, a few engine calls at a time', async () => {
    let creating = 0;
    let mostAtOnce = 0;
    const counting: SandboxRuntime = {
      ...fake,
      async create(request) {
        mostAtOnce = Math.max(mostAtOnce, ++creating);
        await new Promise((resolve) => setTimeout(resolve, 20));
        try {
          return await fake.create(request);
        } finally {
          creating--;
        }
      },
    };
    const spec = await insertSpec(handle.db);
    // Sweeps every 10 ms, so that passes keep reading while creates are still under way.
    const r = reconciler({ runtime: counting, intervalMs: 10 });
    await r.start();

    const rows = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const row = await insertSandbox(handle.db, spec.id);
        r.kick(row.id);
        return row;
      }),
    );

    await vi.waitFor(
      async () => {
        const statuses = await handle.db.select({ status: sandboxes.status }).from(sandboxes);
        expect(statuses.every((s) => s.status === 'RUNNING')).toBe(true);
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(callsOf('create').map((c) => c.target).sort()).toEqual(rows.map((row) => row.id).sort());
    expect(fake.containers()).toHaveLength(50);
    expect(mostAtOnce).toBeLessThanOrEqual(4);
  });

  it('spares a sandbox idle by its traffic whose agent worked since, asking its agent-server, and makes that work its last activity', async () => {
    const agentServer = await startIdleReportingAgentServer();
    try {
      const port = agentServer.port;
      const spec = await insertSpec(handle.db, { idlePauseSeconds: 60 });
      const idleByTraffic = { status: 'RUNNING', lastActiveAt: new Date(Date.now() - 120_000), hostAddress: '127.0.0.1', hostPorts: { AGENT_SERVER: port } } as const;
      const working = await insertSandbox(handle.db, spec.id, idleByTraffic);
      const done = await insertSandbox(handle.db, spec.id, idleByTraffic);
      const cannotSay = await insertSandbox(handle.db, spec.id, idleByTraffic);
      agentServer.idleSeconds.set(working.sessionApiKey, 5);
      agentServer.idleSeconds.set(done.sessionApiKey, 600);
      const now = new Date();

      const applied = await applyPolicies(handle.db, [working, done, cannotSay].map((row) => ({ row, spec })), now);

      expect(applied.map((decision) => decision.sandboxId).sort()).toEqual([done.id, cannotSay.id].sort());
      expect(await readSandbox(handle.db, working.id)).toMatchObject({ desiredState: 'RUNNING', lastActiveAt: new Date(now.getTime() - 5_000) });
      expect((await readSandbox(handle.db, done.id)).desiredState).toBe('PAUSED');
    } finally {
      await agentServer.close();
    }
  });

  it('writes the desired state the policies decide, re-checking each condition in the database', async () => {
    const ago = (seconds: number) => new Date(Date.now() - seconds * 1000);
    const idleSpec = await insertSpec(handle.db, { idlePauseSeconds: 60 });
    const ttlSpec = await insertSpec(handle.db, { ttlSeconds: 60 });
    const idle = await insertSandbox(handle.db, idleSpec.id, { status: 'RUNNING', lastActiveAt: ago(120) });
    const touchedSinceRead = await insertSandbox(handle.db, idleSpec.id, { status: 'RUNNING', lastActiveAt: ago(120) });
    const old = await insertSandbox(handle.db, ttlSpec.id, { status: 'RUNNING', createdAt: ago(120) });
    await handle.db.update(sandboxes).set({ lastActiveAt: new Date() }).where(eq(sandboxes.id, touchedSinceRead.id));

    const applied = await applyPolicies(
      handle.db,
      [idle, touchedSinceRead, old].map((row) => ({ row, spec: row.specId === idleSpec.id ? idleSpec : ttlSpec })),
      new Date(),
    );

    expect(applied.map((d) => [d.sandboxId, d.desired])).toEqual([
      [idle.id, 'PAUSED'],
      [old.id, 'DELETED'],
    ]);
    expect((await readSandbox(handle.db, idle.id)).desiredState).toBe('PAUSED');
    expect((await readSandbox(handle.db, touchedSinceRead.id)).desiredState).toBe('RUNNING');
    expect((await readSandbox(handle.db, old.id)).desiredState).toBe('DELETED');
  });
});
