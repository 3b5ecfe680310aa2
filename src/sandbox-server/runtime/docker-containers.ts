import { dirname } from 'node:path';
import type Docker from 'dockerode';
import { INITIAL_ENV_FILE, type InitialEnvFile } from '../../contracts/agent-server/initial-env.js';
import type { LogRotation } from './container-logs.js';
import { createOptionsFor } from './docker-container-options.js';
import { containerNameFor } from './resource-names.js';
import { dockerMessageOf, statusCodeOf, toRuntimeError } from './docker-errors.js';
import type { DockerEvents } from './docker-events.js';
import { winnerOf } from './docker-name-conflicts.js';
import type { DockerNetworks } from './docker-networks.js';
import { observationFromInspect, observationFromListing } from './docker-observations.js';
import { demultiplexLogs } from './docker-logs.js';
import {
  type ContainerObservation,
  type ContainerRequest,
  LABEL_INSTANCE,
  LABEL_SANDBOX_ID,
  RuntimeError,
  type SandboxRuntime,
} from './runtime.js';
import { tarOf } from './tar.js';
import { type AgentBundles, bringAgentServer } from './agent-bundle.js';
import { type ImageMemory, imageMemory, launchOf, refuseUnfit } from './docker-launch.js';
import { installTrustedCa, trustEnv } from './docker-trust.js';

export interface DockerContainersOptions {
  docker: Docker;
  instanceId: string;
  /** The labels naming the owner (ownerLabels), carried by every container and volume made. */
  owner: Record<string, string>;
  /** The host address sandbox ports are published on. */
  publishHost: string;
  logRotation: LogRotation;
  /** The label filter naming our sandboxes' containers. */
  sandboxContainers: string[];
  networks: DockerNetworks;
  events: DockerEvents;
  /** The agent-server bundle, brought into sandboxes of images not built for it. */
  bundles: AgentBundles;
  /** The installation CA's certificate, which every sandbox trusts (docker-trust.ts); absent, none is installed. */
  trustedCa?: string;
}

export type DockerContainers = Pick<SandboxRuntime, 'create' | 'start' | 'pause' | 'stop' | 'unpause' | 'remove' | 'list' | 'inspect' | 'logs'>;

/**
 * The container verbs. The container name is derived from the sandbox id so that the engine itself
 * refuses a second container for one sandbox (two control planes overlapping during a restart, a
 * create retried after a timeout): the loser gets 409 and adopts the winner's container.
 */
export function createDockerContainers(options: DockerContainersOptions): DockerContainers {
  const { docker } = options;
  const images = imageMemory();
  return {
    async create(request) {
      try {
        return await createAndStart(options, images, request);
      } finally {
        options.networks.spares.fill(request.network.access);
      }
    },
    start: (containerId) => start(docker, containerId),
    async pause(containerId) {
      try {
        await docker.getContainer(containerId).pause();
      } catch (error) {
        if (statusCodeOf(error) === 409 && /already paused/i.test(dockerMessageOf(error))) return;
        throw toRuntimeError(error, 'pause');
      }
    },
    async stop(containerId) {
      try {
        await docker.getContainer(containerId).kill({ signal: 'SIGKILL' });
      } catch (error) {
        // 404: gone; 409: not running.
        const status = statusCodeOf(error);
        if (status === 404 || status === 409) return;
        throw toRuntimeError(error, 'stop');
      }
    },
    async unpause(containerId) {
      try {
        await docker.getContainer(containerId).unpause();
      } catch (error) {
        // Engines answer "is not paused" with 409 or (20.10) 500; either way it is already unpaused.
        // runc's "cannot resume a running process" says the same when the engine still thought the
        // container paused (a freeze that did not finish on a loaded machine): it runs, as asked.
        if (/is not paused|cannot resume a running process/i.test(dockerMessageOf(error))) return;
        throw toRuntimeError(error, 'unpause');
      }
    },
    async remove(containerId) {
      try {
        await docker.getContainer(containerId).remove({ force: true, v: true });
      } catch (error) {
        const status = statusCodeOf(error);
        // 404: already gone; 409 "removal already in progress": someone else is finishing it.
        if (status === 404 || (status === 409 && /already in progress/i.test(dockerMessageOf(error)))) return;
        throw toRuntimeError(error, 'remove');
      }
    },
    list: (sandboxId) => list(options, sandboxId),
    inspect: (containerId) => inspect(options, containerId),
    async logs(containerId, lines) {
      try {
        const output = await docker.getContainer(containerId).logs({ stdout: true, stderr: true, tail: lines, follow: false });
        return demultiplexLogs(Buffer.from(output));
      } catch (error) {
        if (statusCodeOf(error) === 404) return '';
        throw toRuntimeError(error, 'logs');
      }
    },
  };
}

async function inspect({ docker, publishHost, events }: DockerContainersOptions, containerId: string): Promise<ContainerObservation | undefined> {
  try {
    const observation = observationFromInspect(await docker.getContainer(containerId).inspect(), publishHost);
    return events.oomEvented(observation.containerId) ? { ...observation, oomKilled: true } : observation;
  } catch (error) {
    if (statusCodeOf(error) === 404) return undefined;
    throw toRuntimeError(error, 'inspect');
  }
}

async function list(options: DockerContainersOptions, sandboxId: string | undefined): Promise<ContainerObservation[]> {
  const { docker, instanceId, publishHost } = options;
  let containers: Docker.ContainerInfo[];
  const label = sandboxId === undefined ? options.sandboxContainers : [`${LABEL_INSTANCE}=${instanceId}`, `${LABEL_SANDBOX_ID}=${sandboxId}`];
  try {
    containers = await docker.listContainers({ all: true, filters: { label } });
  } catch (error) {
    throw toRuntimeError(error, 'list');
  }
  options.networks.spares.noteContainers(containers);
  // Only a stopped container's OOMKilled flag changes what we report, and stopped containers
  // are few: one inspect each tells why they stopped.
  return Promise.all(
    containers.map((info) => observationFromListing(info, publishHost)).map(async (observation) =>
      observation.state === 'exited' ? ((await inspect(options, observation.containerId)) ?? observation) : observation,
    ),
  );
}

async function start(docker: Docker, containerId: string): Promise<void> {
  try {
    await docker.getContainer(containerId).start();
  } catch (error) {
    // 304: already started.
    if (statusCodeOf(error) === 304) return;
    if (isMissingRuntime(error)) throw missingRuntime(dockerMessageOf(error));
    // 400: the process cannot be started at all (e.g. the command does not exist).
    throw toRuntimeError(error, 'start', [400]);
  }
}

/** Creates the container on a spare network (or one made for it) and starts it. */
async function createAndStart(options: DockerContainersOptions, images: ImageMemory, request: ContainerRequest): Promise<ContainerObservation> {
  const { docker, networks, owner, publishHost, logRotation } = options;
  const launch = await launchOf(docker, options.bundles, request);
  const spare = networks.spares.take(request.sandboxId, request.network.access);
  const network = spare ?? (await networks.ensureNetwork(request));
  let containerId: string;
  const initialEnvFile = Object.keys(request.initialEnv).length > 0 && launch.kind !== 'own-command';
  const trust = options.trustedCa ? trustEnv() : {};
  const env = initialEnvFile ? { ...trust, ...request.env } : { ...trust, ...request.initialEnv, ...request.env };
  try {
    const created = createOptionsFor({ ...request, env }, owner, network, publishHost, spare === undefined ? {} : networks.spares.containerLabels(spare), logRotation);
    const container = await docker.createContainer(launch.kind === 'brought' ? bringAgentServer(created, launch.bundle, request.dataVolume.mountPath) : created);
    containerId = container.id;
  } catch (error) {
    if (statusCodeOf(error) === 409) return adoptByName(options, request);
    if (isMissingRuntime(error)) throw missingRuntime(`"${request.runtime}" is not registered`);
    // 400: the engine rejects the spec; 404: the image does not exist. Neither heals by retrying.
    throw toRuntimeError(error, 'create', [400, 404]);
  }
  if (launch.kind === 'brought') await refuseUnfit(docker.getContainer(containerId), request.image, launch, images);
  if (options.trustedCa) await installTrustedCa(docker.getContainer(containerId), options.trustedCa, { id: launch.imageId, files: images.files });
  if (initialEnvFile) await putInitialEnv(docker.getContainer(containerId), request.initialEnv, request.secretEnv ?? []);
  await start(docker, containerId);
  const observation = await inspect(options, containerId);
  if (!observation) throw new RuntimeError(`container ${containerId} disappeared right after it started`, false);
  return observation;
}

/**
 * Writes the spec's initial_env where only root reads it (INITIAL_ENV_FILE), before the container
 * starts; a container that cannot take it is removed, and the next pass creates it again.
 */
async function putInitialEnv(container: Docker.Container, initialEnv: Record<string, string>, secretEnv: readonly string[]): Promise<void> {
  const file: InitialEnvFile = secretEnv.length > 0 ? { env: initialEnv, secret: [...secretEnv] } : initialEnv;
  const archive = tarOf([
    { path: `${dirname(INITIAL_ENV_FILE).slice(1)}/`, mode: 0o700 },
    { path: INITIAL_ENV_FILE.slice(1), mode: 0o600, content: Buffer.from(JSON.stringify(file)) },
  ]);
  try {
    await container.putArchive(archive, { path: '/' });
  } catch (error) {
    await container.remove({ force: true }).catch(() => undefined);
    throw toRuntimeError(error, 'put initial environment');
  }
}

/** The container that won a name conflict, if it is this sandbox's and ours. */
async function adoptByName(options: DockerContainersOptions, request: ContainerRequest): Promise<ContainerObservation> {
  const { docker, instanceId } = options;
  const name = containerNameFor(request.sandboxId);
  const info = await winnerOf(async () => {
    try {
      return await docker.getContainer(name).inspect();
    } catch (error) {
      if (statusCodeOf(error) === 404) return undefined;
      throw toRuntimeError(error, 'inspect after name conflict');
    }
  });
  if (!info) throw new RuntimeError(`docker inspect after name conflict failed: no container ${name} appeared`, false);
  const labels = info.Config.Labels ?? {};
  if (labels[LABEL_INSTANCE] !== instanceId || labels[LABEL_SANDBOX_ID] !== request.sandboxId) {
    throw new RuntimeError(`container name ${name} is taken by a container this control plane does not own`, true);
  }
  if (info.State.Status === 'created') await start(docker, info.Id);
  return (await inspect(options, info.Id)) ?? observationFromInspect(info, options.publishHost);
}

function isMissingRuntime(error: unknown): boolean {
  return /unknown runtime/i.test(dockerMessageOf(error));
}

/** The spec names a runtime the engine no longer has (runsc unregistered): final until it is back. */
function missingRuntime(why: string): RuntimeError {
  return new RuntimeError(`the sandbox's runtime is missing from the Docker engine (${why}): register it with dockerd again, or delete this sandbox`, true);
}
