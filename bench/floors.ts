/**
 * The two floors the Docker benches compare a sandbox start with, both `docker run` of the same
 * image through the engine API, without us:
 * - plain: the image with its agent-server port published, nothing else (createFloorContainer);
 * - full: everything our create passes: the create options our runtime builds (createOptionsFor)
 *   from the same spec (containerRequestFor), so the same limits, data volume, env, labels, init,
 *   log rotation and security options, on a network made ahead of time by the same spare-network
 *   pool our runtime draws from (a sandbox's create takes a ready spare, so no network is made on
 *   its critical path, and neither is the floor's). The network is taken before the clock starts;
 *   the data volume is made by the create, as ours is.
 * Each run is timed until the agent-server answers /alive or its first `echo ok`, asked directly on
 * the published port every 5 ms, and split into phases from the engine's and the agent-server's
 * own clocks (phases.ts).
 */
import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { logger } from '../src/logger.js';
import { type ContainerSpec, containerRequestFor } from '../src/sandbox-server/reconciler/container-request.js';
import { DEFAULT_LOG_ROTATION } from '../src/sandbox-server/runtime/container-logs.js';
import { createOptionsFor } from '../src/sandbox-server/runtime/docker-container-options.js';
import { createDockerNetworks, type DockerNetworks } from '../src/sandbox-server/runtime/docker-networks.js';
import { ownerLabels } from '../src/sandbox-server/runtime/runtime.js';
import { type BenchImage, createFloorContainer, echoDirect, FLOOR_KEY, removeSandboxResources, waitFor } from './docker-fixture.js';
import { until } from './measure.js';
import { containerPhases, type Phases } from './phases.js';

/** Where our agent-server keeps its data, as the control plane's default DATA_MOUNT_PATH. */
const DATA_MOUNT_PATH = '/data';
/** Spare networks the full floor keeps ready: it runs one container at a time. */
const SPARE_NETWORKS = 2;

export type FloorKind = 'plain' | 'full';
export type FloorAnswer = 'alive' | 'echo';

export interface FloorRun {
  ms: number;
  phases: Phases;
}

export interface Floors {
  /** One `docker run` of `kind` until `answer`, then its container, volume and network removed (untimed). */
  run(kind: FloorKind, spec: ContainerSpec, answer: FloorAnswer, timeoutMs: number): Promise<FloorRun>;
  /** A container of `kind`, started and left running (for pause and resume); `remove` takes it away with its volume and network. */
  started(kind: FloorKind, spec: ContainerSpec, timeoutMs: number): Promise<{ container: Docker.Container; remove(): Promise<void> }>;
  close(): Promise<void>;
}

export function createFloors(docker: Docker, bench: BenchImage): Floors {
  // An instance of their own, so that the control plane the bench runs leaves them alone (and says so
  // in no log line) while it removes what is its own.
  const instanceId = `${bench.instanceId}-floor`;
  const owner = ownerLabels(instanceId, `${instanceId}-installation`);
  const networks = createDockerNetworks({ docker, instanceId, owner, spareNetworks: SPARE_NETWORKS, log: logger });
  const prepare = async (kind: FloorKind, spec: ContainerSpec, timeoutMs: number) =>
    kind === 'plain' ? plain(docker, bench, spec) : full(docker, networks, owner, spec, timeoutMs);
  return {
    async started(kind, spec, timeoutMs) {
      const prepared = await prepare(kind, spec, timeoutMs);
      const container = await prepared.create();
      await container.start();
      return {
        container,
        async remove() {
          await container.remove({ force: true, v: true });
          await prepared.cleanUp();
        },
      };
    },
    async run(kind, spec, answer, timeoutMs) {
      const prepared = await prepare(kind, spec, timeoutMs);
      const began = Date.now();
      const container = await prepared.create();
      try {
        await container.start();
        const port = (await container.inspect()).NetworkSettings.Ports['8000/tcp']?.[0]?.HostPort;
        const base = `http://127.0.0.1:${port}`;
        await until(answer === 'alive' ? () => answersAlive(base) : () => echoDirect(base), waitFor(timeoutMs));
        const done = Date.now();
        return { ms: done - began, phases: await containerPhases(container, began, done) };
      } finally {
        await container.remove({ force: true, v: true });
        await prepared.cleanUp();
      }
    },
    async close() {
      await networks.close();
      await removeSandboxResources(docker, instanceId);
    },
  };
}

interface Prepared {
  create(): Promise<Docker.Container>;
  cleanUp(): Promise<void>;
}

function plain(docker: Docker, bench: BenchImage, spec: ContainerSpec): Prepared {
  return { create: () => createFloorContainer(docker, bench, spec.runtime), cleanUp: async () => undefined };
}

/** A spare network taken for a fresh floor id (waiting for the pool to make one, untimed), and the create our runtime would make on it. */
async function full(docker: Docker, networks: DockerNetworks, owner: Record<string, string>, spec: ContainerSpec, timeoutMs: number): Promise<Prepared> {
  const id = `floor-${randomBytes(8).toString('hex')}`;
  const request = containerRequestFor({ id, sessionApiKey: FLOOR_KEY, image: null }, spec, DATA_MOUNT_PATH);
  let network: string | undefined;
  await until(async () => {
    network = networks.spares.take(id, request.network.access);
    if (network === undefined) networks.spares.fill(request.network.access);
    return network !== undefined;
  }, waitFor(timeoutMs));
  const options = createOptionsFor(request, owner, network!, '127.0.0.1', networks.spares.containerLabels(network!), DEFAULT_LOG_ROTATION);
  return {
    create: () => docker.createContainer(options),
    async cleanUp() {
      await docker.getVolume(request.dataVolume.name).remove().catch(() => undefined);
      await networks.spares.release(id);
      networks.spares.fill(request.network.access);
    },
  };
}

/** Whether the agent-server of a floor container at `baseUrl` answers /alive. */
export async function answersAlive(baseUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${baseUrl}/alive`, { headers: { 'X-Session-API-Key': FLOOR_KEY }, signal: AbortSignal.timeout(5_000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}
