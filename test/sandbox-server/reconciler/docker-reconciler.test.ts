import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { openTestDatabase } from '../../helpers/database.js';
import { sessionKeyDigest } from '../../../src/contracts/agent-server/session-key-digest.js';
import { type SandboxRow, type SandboxSpecRow, sandboxes } from '../../../src/sandbox-server/db/schema.js';
import { Reconciler, type ReconcilerOptions } from '../../../src/sandbox-server/reconciler/index.js';
import { dataVolumeNameFor, networkNameFor } from '../../../src/sandbox-server/runtime/resource-names.js';
import { createDockerRuntime, LABEL_INSTANCE, LABEL_SANDBOX_ID, LABEL_SPARE_NETWORK } from '../../../src/sandbox-server/runtime/index.js';
import { ALIVE_SERVER_COMMAND, connectDocker, removeInstanceResources, TEST_BASE_IMAGE, testInstanceId } from '../../helpers/docker.js';
import { insertSandbox, insertSpec, readSandbox, setDesired } from './fixtures.js';

const docker = await connectDocker();
const instanceId = testInstanceId();
const waitLong = { timeout: 30_000, interval: 100 };

describe.skipIf(!docker)('Reconciler against the Docker engine', { timeout: 60_000 }, () => {
  let handle: DatabaseHandle;
  let spec: SandboxSpecRow;
  const reconcilers: Reconciler[] = [];

  beforeAll(async () => {
    handle = await openTestDatabase('pglite');
    spec = await insertSpec(handle.db, { image: TEST_BASE_IMAGE, command: ALIVE_SERVER_COMMAND, cpus: 1, memoryMb: 256, pidsLimit: 256 });
  });
  afterEach(async () => {
    await Promise.all(reconcilers.splice(0).map((r) => r.stop()));
    await handle.db.delete(sandboxes);
    await removeInstanceResources(docker!, instanceId);
  });
  afterAll(async () => {
    await handle?.close();
  });

  async function startReconciler(options: Partial<ReconcilerOptions> = {}, spareNetworks = 0): Promise<Reconciler> {
    const runtime = createDockerRuntime({ instanceId, docker: docker!, spareNetworks });
    const reconciler = new Reconciler({ db: handle.db, runtime, instanceId, intervalMs: 1_000, ...options });
    reconcilers.push(reconciler);
    await reconciler.start();
    return reconciler;
  }

  async function networksOf(sandboxId: string) {
    return docker!.listNetworks({ filters: { label: [`${LABEL_INSTANCE}=${instanceId}`, `${LABEL_SANDBOX_ID}=${sandboxId}`] } });
  }

  async function containersOf(sandboxId: string) {
    return docker!.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${instanceId}`, `${LABEL_SANDBOX_ID}=${sandboxId}`] } });
  }

  /** Waits for the status (and, when given, its detail: a removal shows "being removed" first). */
  async function waitForStatus(sandboxId: string, status: SandboxRow['status'], detail?: string): Promise<SandboxRow> {
    return vi.waitFor(async () => {
      const row = await readSandbox(handle.db, sandboxId);
      expect(row.status).toBe(status);
      if (detail !== undefined) expect(row.statusDetail).toBe(detail);
      return row;
    }, waitLong);
  }

  it('starts, pauses, resumes and deletes a sandbox for real', async () => {
    const sandbox = await insertSandbox(handle.db, spec.id);
    const reconciler = await startReconciler();

    const running = await waitForStatus(sandbox.id, 'RUNNING');
    const port = running.hostPorts?.AGENT_SERVER;
    expect((await fetch(`http://127.0.0.1:${port}/alive`)).status).toBe(200);
    const container = docker!.getContainer(running.containerId!);
    const info = await container.inspect();
    expect(Object.values(info.NetworkSettings.Ports).flat()).toEqual([{ HostIp: '127.0.0.1', HostPort: String(port) }]);
    expect(info.HostConfig).toMatchObject({ NanoCpus: 1e9, Memory: 256 * 1024 * 1024, PidsLimit: 256, Privileged: false });
    expect(Object.keys(info.NetworkSettings.Networks)).toEqual([networkNameFor(sandbox.id)]);
    // Only the key's digest enters the container, in its environment; the key itself never does.
    expect(info.Config.Env).toContain(`SESSION_API_KEY_SHA256=${sessionKeyDigest(sandbox.sessionApiKey)}`);
    expect(JSON.stringify(info)).not.toContain(sandbox.sessionApiKey);

    await setDesired(handle.db, sandbox.id, 'PAUSED');
    reconciler.kick(sandbox.id);
    await waitForStatus(sandbox.id, 'PAUSED');
    expect((await container.inspect()).State.Paused).toBe(true);

    await setDesired(handle.db, sandbox.id, 'RUNNING');
    reconciler.kick(sandbox.id);
    await waitForStatus(sandbox.id, 'RUNNING');
    expect((await container.inspect()).State.Paused).toBe(false);

    await setDesired(handle.db, sandbox.id, 'DELETED');
    reconciler.kick(sandbox.id);
    await vi.waitFor(async () => expect((await readSandbox(handle.db, sandbox.id)).deletedAt).not.toBeNull(), waitLong);
    expect(await containersOf(sandbox.id)).toEqual([]);
    const { Volumes } = await docker!.listVolumes({ filters: { name: [dataVolumeNameFor(sandbox.id)] } });
    expect(Volumes ?? []).toEqual([]);
    expect(await networksOf(sandbox.id)).toEqual([]);
  });

  it('reports a container killed from outside as ERROR and one removed from outside as MISSING', async () => {
    const killed = await insertSandbox(handle.db, spec.id);
    const removed = await insertSandbox(handle.db, spec.id);
    await startReconciler();
    const killedRow = await waitForStatus(killed.id, 'RUNNING');
    const removedRow = await waitForStatus(removed.id, 'RUNNING');

    await docker!.getContainer(killedRow.containerId!).kill();
    await docker!.getContainer(removedRow.containerId!).remove({ force: true });

    await waitForStatus(killed.id, 'ERROR', 'container exited with code 137');
    await waitForStatus(removed.id, 'MISSING', 'container was removed outside the control plane');
    expect(await containersOf(removed.id)).toEqual([]);
  });

  it('records a sandbox whose image or command is bad as ERROR with the engine message, and does not retry', async () => {
    // Of the control plane's own namespace, which is never pulled: the engine is asked for nothing else.
    const missingImage = await insertSpec(handle.db, { image: 'sandbox-server/no-such-image:nope', command: ALIVE_SERVER_COMMAND });
    const missingCommand = await insertSpec(handle.db, { image: TEST_BASE_IMAGE, command: ['/no/such/program'] });
    const noImage = await insertSandbox(handle.db, missingImage.id);
    const noCommand = await insertSandbox(handle.db, missingCommand.id);
    const reconciler = await startReconciler();

    const noImageRow = await waitForStatus(noImage.id, 'ERROR');
    const noCommandRow = await waitForStatus(noCommand.id, 'ERROR');
    expect(noImageRow.statusDetail).toContain('No such image');
    // The init process starts, fails to exec the command, and exits 127 (command not found).
    expect(noCommandRow.statusDetail).toBe('container exited with code 127');
    await reconciler.reconcileOnce();
    expect(await readSandbox(handle.db, noImage.id)).toEqual(noImageRow);
    expect(await readSandbox(handle.db, noCommand.id)).toEqual(noCommandRow);
    expect((await containersOf(noCommand.id)).map((c) => c.State)).toEqual(['exited']);
  });

  it('turns a sandbox whose runtime left the engine ERROR, saying so, and runs each spec under its runtime', async () => {
    // A runtime unregistered from dockerd after the spec was made looks like any name the engine lacks.
    const gone = await insertSpec(handle.db, { image: TEST_BASE_IMAGE, command: ALIVE_SERVER_COMMAND, runtime: 'runsc-unregistered' as never });
    const underGvisor = await insertSpec(handle.db, { image: TEST_BASE_IMAGE, command: ALIVE_SERVER_COMMAND, runtime: 'runsc' });
    const orphaned = await insertSandbox(handle.db, gone.id);
    const gvisor = await insertSandbox(handle.db, underGvisor.id);
    await startReconciler();
    const row = await waitForStatus(orphaned.id, 'ERROR');
    expect(row.statusDetail).toBe(
      `the sandbox's runtime is missing from the Docker engine ("runsc-unregistered" is not registered): register it with dockerd again, or delete this sandbox`,
    );
    const running = await waitForStatus(gvisor.id, 'RUNNING');
    expect((await docker!.getContainer(running.containerId!).inspect()).HostConfig.Runtime).toBe('runsc');
  });

  it('removes a labelled container and network that no row claims once the grace period is over', async () => {
    const orphanId = randomUUID();
    const stray = await createDockerRuntime({ instanceId, docker: docker! }).create({
      sandboxId: orphanId,
      specId: spec.id,
      image: TEST_BASE_IMAGE,
      command: ALIVE_SERVER_COMMAND,
      env: {},
      initialEnv: {},
      workingDir: '/workspace',
      exposedPorts: [],
      cpus: null,
      memoryMb: null,
      pidsLimit: null,
      runtime: 'runc',
      dataVolume: { name: dataVolumeNameFor(orphanId), mountPath: '/data' },
      network: { name: networkNameFor(orphanId), access: 'internet' },
    });

    await startReconciler({ orphanGraceMs: 500, intervalMs: 200 });

    await vi.waitFor(async () => expect(await containersOf(orphanId)).toEqual([]), waitLong);
    await expect(docker!.getContainer(stray.containerId).inspect()).rejects.toMatchObject({ statusCode: 404 });
    const { Volumes } = await docker!.listVolumes({ filters: { name: [dataVolumeNameFor(orphanId)] } });
    expect(Volumes ?? []).toEqual([]);
    await vi.waitFor(async () => expect(await networksOf(orphanId)).toEqual([]), waitLong);
    // A network left without its container (a crash between the two creates) goes the same way.
    const strayNetwork = randomUUID();
    await docker!.createNetwork({ Name: networkNameFor(strayNetwork), Labels: { [LABEL_INSTANCE]: instanceId, [LABEL_SANDBOX_ID]: strayNetwork } });
    await vi.waitFor(async () => expect(await networksOf(strayNetwork)).toEqual([]), waitLong);
  });

  it('adopts sandboxes mid-start after a restart, overlapping the old control plane, without duplicates', async () => {
    const rows = await Promise.all(Array.from({ length: 6 }, () => insertSandbox(handle.db, spec.id)));
    const before = await startReconciler();
    await vi.waitFor(async () => {
      const listed = await docker!.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${instanceId}`] } });
      expect(listed.length).toBeGreaterThan(0);
    }, waitLong);

    const after = await startReconciler();
    await before.stop();

    for (const row of rows) await waitForStatus(row.id, 'RUNNING');
    for (const row of rows) {
      const containers = await containersOf(row.id);
      expect(containers).toHaveLength(1);
      expect((await readSandbox(handle.db, row.id)).containerId).toBe(containers[0]?.Id);
    }
    await after.reconcileOnce();
    expect(await docker!.listContainers({ all: true, filters: { label: [`${LABEL_INSTANCE}=${instanceId}`] } })).toHaveLength(rows.length);
    // Each kept its own network, the one its container is on, across the overlap; none was swept.
    for (const row of rows) {
      const [container] = await containersOf(row.id);
      const info = await docker!.getContainer(container!.Id).inspect();
      expect((await networksOf(row.id)).map((n) => n.Id)).toContain(info.HostConfig.NetworkMode);
    }
  });

  it("starts sandboxes on spare networks; a restarted control plane keeps the one a sandbox is on, removes the previous one's unused spares, and leaks none", async () => {
    const spares = async () =>
      (await docker!.listNetworks({ filters: { label: [`${LABEL_INSTANCE}=${instanceId}`, LABEL_SPARE_NETWORK] } })).map((n) => n.Name).sort();
    const networkOf = async (containerId: string) => Object.keys((await docker!.getContainer(containerId).inspect()).NetworkSettings.Networks);
    const runtime = createDockerRuntime({ instanceId, docker: docker!, spareNetworks: 2 });
    const before = await startReconciler({ runtime });
    const first = await insertSandbox(handle.db, spec.id);
    before.kick(first.id);
    await waitForStatus(first.id, 'RUNNING');
    // Ready: listed by the engine and no longer reported by the runtime (it counts a new one a moment later).
    await vi.waitFor(async () => {
      const reported = new Set((await runtime.listNetworks()).map((n) => n.name));
      expect((await spares()).filter((name) => !reported.has(name))).toHaveLength(2);
    }, waitLong);
    const second = await insertSandbox(handle.db, spec.id);
    before.kick(second.id);
    const running = await waitForStatus(second.id, 'RUNNING');
    const [spare] = await networkOf(running.containerId!);
    expect(await spares()).toContain(spare);
    await vi.waitFor(async () => expect(await spares()).toHaveLength(3), waitLong);
    await before.stop();

    // Restarted (another process: its own spares, none made before a create asks): the previous
    // process's ready spares go after the grace, the one a sandbox is on stays with it.
    const after = await startReconciler({ orphanGraceMs: 500, intervalMs: 200 }, 2);
    await vi.waitFor(async () => expect(await spares()).toEqual([spare]), waitLong);
    await after.reconcileOnce();
    expect((await readSandbox(handle.db, second.id)).status).toBe('RUNNING');
    expect(await networkOf(running.containerId!)).toEqual([spare]);

    for (const sandbox of [first, second]) {
      await setDesired(handle.db, sandbox.id, 'DELETED');
      after.kick(sandbox.id);
    }
    for (const sandbox of [first, second]) {
      await vi.waitFor(async () => expect((await readSandbox(handle.db, sandbox.id)).deletedAt).not.toBeNull(), waitLong);
    }
    expect(await docker!.listNetworks({ filters: { label: [`${LABEL_INSTANCE}=${instanceId}`] } })).toEqual([]);
  });
});
