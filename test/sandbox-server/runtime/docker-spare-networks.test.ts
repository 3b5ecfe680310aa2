import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  createDockerRuntime,
  LABEL_INSTANCE,
  LABEL_NETWORK,
  LABEL_SANDBOX_ID,
  LABEL_SPARE_NETWORK,
  type SandboxRuntime,
} from '../../../src/sandbox-server/runtime/index.js';
import { connectDocker, containerRequest, removeInstanceResources, testInstanceId } from '../../helpers/docker.js';

const docker = await connectDocker();
const waitLong = { timeout: 30_000, interval: 100 };

describe.skipIf(!docker)('Spare sandbox networks on the Docker engine', { timeout: 90_000 }, () => {
  const instanceId = testInstanceId();

  afterAll(async () => {
    await removeInstanceResources(docker!, instanceId);
  });

  /** The spare networks of the instance, by name. */
  async function spares(): Promise<string[]> {
    const networks = await docker!.listNetworks({ filters: { label: [`${LABEL_INSTANCE}=${instanceId}`, LABEL_SPARE_NETWORK] } });
    return networks.map((n) => n.Name).sort();
  }

  /**
   * The spares `runtime` holds ready: listed by the engine and left out of its listNetworks. (The
   * engine lists a new spare a moment before the runtime counts it ready.)
   */
  async function readySpares(runtime: SandboxRuntime, listed: () => Promise<string[]> = spares): Promise<string[]> {
    const reported = new Set((await runtime.listNetworks()).map((n) => n.name));
    return (await listed()).filter((name) => !reported.has(name));
  }

  async function networkOf(containerId: string): Promise<string> {
    const names = Object.keys((await docker!.getContainer(containerId).inspect()).NetworkSettings.Networks);
    expect(names).toHaveLength(1);
    return names[0]!;
  }

  async function removeSandbox(runtime: SandboxRuntime, containerId: string, sandboxId: string): Promise<void> {
    await runtime.remove(containerId);
    await runtime.removeNetworks(sandboxId);
  }

  it('makes spares once a sandbox of that access was created; a create takes one for itself alone, and it is removed with its sandbox', async () => {
    const runtime = createDockerRuntime({ instanceId, docker: docker!, spareNetworks: 2 });
    // None is made before a sandbox asks: this first one gets a network of its own.
    const first = containerRequest();
    const a = await runtime.create(first);
    expect(await networkOf(a.containerId)).toBe(first.network.name);
    // Ready spares belong to no sandbox, and are no orphans either: they are left out.
    await vi.waitFor(async () => expect(await readySpares(runtime)).toHaveLength(2), waitLong);
    const ready = await spares();
    expect(ready).toHaveLength(2);

    const second = containerRequest();
    const b = await runtime.create(second);
    const spare = await networkOf(b.containerId);
    expect(ready).toContain(spare);
    const container = await docker!.getContainer(b.containerId).inspect();
    expect(container.Config.Labels).toMatchObject({ [LABEL_NETWORK]: spare, [LABEL_SANDBOX_ID]: second.sandboxId });
    // Built as a sandbox's own network: a bridge named for the firewall, a /29 of the pool.
    const network = await docker!.getNetwork(spare).inspect();
    expect(network.Options?.['com.docker.network.bridge.name']).toMatch(/^sbxi[0-9a-f]{11}$/);
    expect(network.IPAM?.Config?.[0]?.Subnet).toMatch(/^10\.213\.\d+\.\d+\/29$/);
    expect(await runtime.listNetworks()).toContainEqual({ name: spare, sandboxId: second.sandboxId });
    // Taken, it is replaced; the next create takes another one, never the same.
    await vi.waitFor(async () => expect(await readySpares(runtime)).toHaveLength(2), waitLong);
    const third = containerRequest();
    const c = await runtime.create(third);
    expect(await networkOf(c.containerId)).not.toBe(spare);
    expect(await spares()).toContain(await networkOf(c.containerId));
    // An offline sandbox never gets an online spare: it gets its own, and offline spares follow.
    const offline = containerRequest();
    offline.network.access = 'none';
    const d = await runtime.create(offline);
    expect(await networkOf(d.containerId)).toBe(offline.network.name);

    // It serves that sandbox only: it goes with it, and the spares are made anew.
    await removeSandbox(runtime, b.containerId, second.sandboxId);
    expect(await spares()).not.toContain(spare);
    expect((await runtime.listNetworks()).map((n) => n.name)).not.toContain(spare);
    // In use: c's; ready: two online, two offline (their bridges named for the offline rule).
    await vi.waitFor(async () => expect(await spares()).toHaveLength(5), waitLong);
    const bridges = await Promise.all((await spares()).map(async (name) => (await docker!.getNetwork(name).inspect()).Options?.['com.docker.network.bridge.name']));
    expect(bridges.filter((bridge) => bridge?.startsWith('sbxn'))).toHaveLength(2);
  });

  it("after a restart, reports the spare a sandbox is on as that sandbox's and the previous process's others as no one's, and removes it with its sandbox", async () => {
    const before = createDockerRuntime({ instanceId: `${instanceId}-restart`, docker: docker!, spareNetworks: 1 });
    const instanceSpares = async () =>
      (await docker!.listNetworks({ filters: { label: [`${LABEL_INSTANCE}=${instanceId}-restart`, LABEL_SPARE_NETWORK] } })).map((n) => n.Name);
    try {
      await before.create(containerRequest());
      await vi.waitFor(async () => expect(await readySpares(before, instanceSpares)).toHaveLength(1), waitLong);
      const wanted = containerRequest();
      const created = await before.create(wanted);
      const spare = await networkOf(created.containerId);
      await vi.waitFor(async () => expect(await instanceSpares()).toHaveLength(2), waitLong);
      const [unused] = (await instanceSpares()).filter((name) => name !== spare);

      // A new process: it learns which sandbox is on which spare from the containers' labels.
      const after = createDockerRuntime({ instanceId: `${instanceId}-restart`, docker: docker!, spareNetworks: 1 });
      await after.list();
      const networks = await after.listNetworks();
      expect(networks).toContainEqual({ name: spare, sandboxId: wanted.sandboxId });
      expect(networks).toContainEqual({ name: unused, sandboxId: '' });
      // What the orphan sweep does with the one no sandbox uses; the other is not this process's to keep.
      await after.removeNetwork(unused!);
      await removeSandbox(after, created.containerId, wanted.sandboxId);
      expect(await instanceSpares()).toEqual([]);
    } finally {
      await removeInstanceResources(docker!, `${instanceId}-restart`);
    }
  });

  it('when closed, finishes the spare it was making and removes the ready ones, keeping the one a sandbox is on', async () => {
    const closing = createDockerRuntime({ instanceId: `${instanceId}-close`, docker: docker!, spareNetworks: 2 });
    const instanceSpares = async () =>
      (await docker!.listNetworks({ filters: { label: [`${LABEL_INSTANCE}=${instanceId}-close`, LABEL_SPARE_NETWORK] } })).map((n) => n.Name);
    try {
      await closing.create(containerRequest());
      await vi.waitFor(async () => expect(await readySpares(closing, instanceSpares)).toHaveLength(2), waitLong);
      const created = await closing.create(containerRequest());
      const spare = await networkOf(created.containerId);
      // Closed while the taken spare's replacement may still be under way.
      await closing.close();
      expect(await instanceSpares()).toEqual([spare]);
      // Closed, it makes no more.
      await closing.create(containerRequest());
      expect(await instanceSpares()).toEqual([spare]);
    } finally {
      await removeInstanceResources(docker!, `${instanceId}-close`);
    }
  });
});

