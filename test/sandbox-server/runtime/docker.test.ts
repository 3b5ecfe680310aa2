import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  type ContainerRequest,
  containerNameFor,
  createDockerRuntime,
  LABEL_INSTANCE,
  LABEL_SANDBOX_ID,
  LABEL_SPEC_ID,
  type RuntimeEvent,
  RuntimeError,
} from '../../../src/sandbox-server/runtime/index.js';
import { connectDocker, containerRequest, removeInstanceResources, TEST_BASE_IMAGE, testInstanceId } from '../../helpers/docker.js';

const docker = await connectDocker();
const instanceId = testInstanceId();

/** With the environment and limits the first test finds on the container. */
function request(overrides: Partial<ContainerRequest> = {}): ContainerRequest {
  return containerRequest({ env: { OH_SESSION_API_KEYS_0: 'secret-key', FOO: 'bar' }, cpus: 0.5, memoryMb: 256, pidsLimit: 128, ...overrides });
}

async function alive(port: number | undefined): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/alive`, { signal: AbortSignal.timeout(1_000) })).ok;
  } catch {
    return false;
  }
}

describe.skipIf(!docker)('Docker runtime', { timeout: 60_000 }, () => {
  const runtime = createDockerRuntime({ instanceId, docker: docker! });

  afterAll(async () => {
    await removeInstanceResources(docker!, instanceId);
  });

  it('creates a labelled, limited, unprivileged container published on loopback only, and it answers there', async () => {
    const wanted = request();
    const created = await runtime.create(wanted);

    expect(created).toMatchObject({ sandboxId: wanted.sandboxId, state: 'running', exitCode: null });
    const port = created.hostPorts.AGENT_SERVER;
    expect(port).toBeGreaterThan(0);
    await vi.waitFor(async () => expect(await alive(port)).toBe(true), { timeout: 10_000, interval: 50 });

    const info = await docker!.getContainer(created.containerId).inspect();
    expect(info.Name).toBe(`/${containerNameFor(wanted.sandboxId)}`);
    expect(info.Config.Labels).toMatchObject({ [LABEL_SANDBOX_ID]: wanted.sandboxId, [LABEL_SPEC_ID]: 'spec-test', [LABEL_INSTANCE]: instanceId });
    expect(info.Config.Env).toEqual(expect.arrayContaining(['OH_SESSION_API_KEYS_0=secret-key', 'FOO=bar']));
    expect(info.Config.WorkingDir).toBe('/workspace');
    expect(info.HostConfig).toMatchObject({ NanoCpus: 500_000_000, Memory: 256 * 1024 * 1024, PidsLimit: 128, Privileged: false });
    expect(info.HostConfig.PortBindings).toEqual({ '8000/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] });
    expect(info.NetworkSettings.Ports['8000/tcp']).toEqual([{ HostIp: '127.0.0.1', HostPort: String(port) }]);
    expect(info.Mounts).toEqual([expect.objectContaining({ Type: 'volume', Name: wanted.dataVolume.name, Destination: '/data' })]);
    expect(info.Mounts.some((m) => m.Source.includes('docker.sock'))).toBe(false);
    const volume = await docker!.getVolume(wanted.dataVolume.name).inspect();
    expect(volume.Labels).toMatchObject({ [LABEL_INSTANCE]: instanceId, [LABEL_SANDBOX_ID]: wanted.sandboxId });

    expect(await runtime.list()).toContainEqual(created);
    expect(await runtime.list(wanted.sandboxId)).toEqual([created]);
    expect(await runtime.list(`${wanted.sandboxId}-other`)).toEqual([]);
    expect(await runtime.inspect(created.containerId)).toEqual(created);

    // Its own labelled network, its only one: a bridge named for the firewall, a /29 of the pool.
    const network = await docker!.getNetwork(wanted.network.name).inspect();
    expect(Object.keys(info.NetworkSettings.Networks)).toEqual([wanted.network.name]);
    expect(info.HostConfig.NetworkMode).toBe(network.Id);
    expect(network.Labels).toMatchObject({ [LABEL_INSTANCE]: instanceId, [LABEL_SANDBOX_ID]: wanted.sandboxId });
    expect(network.Options?.['com.docker.network.bridge.name']).toMatch(/^sbxi[0-9a-f]{11}$/);
    expect(network.IPAM?.Config?.[0]?.Subnet).toMatch(/^10\.213\.\d+\.\d+\/29$/);
    expect(await runtime.listNetworks()).toContainEqual({ name: wanted.network.name, sandboxId: wanted.sandboxId });
  });

  it('adopts the existing container when asked to create one for the same sandbox again', async () => {
    const wanted = request();
    const [first, second] = await Promise.all([runtime.create(wanted), runtime.create(wanted)]);

    expect(second.containerId).toBe(first.containerId);
    expect((await runtime.list()).filter((c) => c.sandboxId === wanted.sandboxId)).toHaveLength(1);
    // Both creates raced for the network too; the container is on one of the sandbox's networks.
    const info = await docker!.getContainer(first.containerId).inspect();
    const networks = await docker!.listNetworks({ filters: { label: [`${LABEL_SANDBOX_ID}=${wanted.sandboxId}`] } });
    expect(networks.map((n) => n.Id)).toContain(info.HostConfig.NetworkMode);
  });

  it('pauses and unpauses for real, and repeating either is success', async () => {
    const { containerId } = await runtime.create(request());
    const container = docker!.getContainer(containerId);

    await runtime.pause(containerId);
    await runtime.pause(containerId);
    expect((await container.inspect()).State.Paused).toBe(true);
    expect((await runtime.inspect(containerId))?.state).toBe('paused');

    await runtime.unpause(containerId);
    await runtime.unpause(containerId);
    expect((await container.inspect()).State.Paused).toBe(false);
    expect((await runtime.inspect(containerId))?.state).toBe('running');
  });

  it('sees a container killed from outside as exited with its exit code, and starts it again', async () => {
    const { containerId } = await runtime.create(request());
    await docker!.getContainer(containerId).kill();

    const listed = (await runtime.list()).find((c) => c.containerId === containerId);
    expect(listed).toMatchObject({ state: 'exited', exitCode: 137, hostPorts: {} });
    expect(await runtime.inspect(containerId)).toMatchObject({ state: 'exited', exitCode: 137 });

    await runtime.start(containerId);
    await runtime.start(containerId);
    const restarted = await runtime.inspect(containerId);
    expect(restarted?.state).toBe('running');
    expect(restarted?.hostPorts.AGENT_SERVER).toBeGreaterThan(0);
  });

  it('removes the container, its volume and its network, and removing again is success', async () => {
    const wanted = request();
    const { containerId } = await runtime.create(wanted);

    // A network is removed only once its container is gone; until then the failure is retryable.
    const early = await runtime.removeNetworks(wanted.sandboxId).catch((e: unknown) => e);
    expect(early).toBeInstanceOf(RuntimeError);
    expect((early as RuntimeError).final).toBe(false);
    await runtime.remove(containerId);
    await runtime.removeNetworks(wanted.sandboxId);
    await runtime.removeNetworks(wanted.sandboxId);
    await runtime.remove(containerId);
    await runtime.removeVolume(wanted.dataVolume.name);
    await runtime.removeVolume(wanted.dataVolume.name);

    expect(await runtime.inspect(containerId)).toBeUndefined();
    expect((await runtime.list()).some((c) => c.containerId === containerId)).toBe(false);
    const { Volumes } = await docker!.listVolumes({ filters: { name: [wanted.dataVolume.name] } });
    expect(Volumes ?? []).toEqual([]);
    expect(await docker!.listNetworks({ filters: { name: [wanted.network.name] } })).toEqual([]);
  });

  it('fails for good when the image does not exist', async () => {
    const failure = await runtime.create(request({ image: 'sandbox-server-test/no-such-image:nope' })).catch((e: unknown) => e);

    expect(failure).toBeInstanceOf(RuntimeError);
    expect(failure).toMatchObject({ final: true, message: expect.stringContaining('No such image') });
  });

  it('refuses, for good, a container name held by a container it does not own', async () => {
    const wanted = request();
    const squatter = await docker!.createContainer({
      name: containerNameFor(wanted.sandboxId),
      Image: TEST_BASE_IMAGE,
      Cmd: ['true'],
      Labels: { [LABEL_INSTANCE]: `${instanceId}-other`, [LABEL_SANDBOX_ID]: wanted.sandboxId },
    });
    try {
      await expect(runtime.create(wanted)).rejects.toMatchObject({ final: true, message: expect.stringContaining('does not own') });
    } finally {
      await squatter.remove({ force: true });
    }
  });

  it("reads the last lines of a container's log, stdout and stderr together", async () => {
    const script = 'for i in 1 2 3 4 5 6; do echo line $i; done; sleep 0.5; echo "cannot listen" >&2; exec sleep 600';
    const container = await runtime.create({ ...request(), command: ['sh', '-c', script] });
    await vi.waitFor(async () => expect(await runtime.logs(container.containerId, 3)).toBe('line 5\nline 6\ncannot listen\n'), {
      timeout: 10_000,
      interval: 100,
    });
    expect(await runtime.logs('no-such-container', 3)).toBe('');
  });

  it('reports lifecycle events of its own containers only', async () => {
    const events: RuntimeEvent[] = [];
    const stop = runtime.watch((event) => events.push(event));
    try {
      // The stream attaches asynchronously; keep pausing until it has seen one.
      const mine = await runtime.create(request());
      const foreign = createDockerRuntime({ instanceId: `${instanceId}-other`, docker: docker! });
      const theirs = await foreign.create(request());
      try {
        await vi.waitFor(
          async () => {
            await runtime.pause(mine.containerId);
            await runtime.unpause(mine.containerId);
            expect(events).toContainEqual({ sandboxId: mine.sandboxId, containerId: mine.containerId, action: 'pause' });
          },
          { timeout: 10_000, interval: 200 },
        );
        await foreign.pause(theirs.containerId);
        await runtime.pause(mine.containerId);
        await vi.waitFor(() => expect(events.filter((e) => e.action === 'pause').length).toBeGreaterThanOrEqual(2));
        expect(events.every((e) => e.sandboxId === mine.sandboxId)).toBe(true);
      } finally {
        await removeInstanceResources(docker!, `${instanceId}-other`);
      }
    } finally {
      stop();
    }
  });
});
