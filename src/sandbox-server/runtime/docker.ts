import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Docker from 'dockerode';
import { CONTAINER_STATES, type ContainerState } from '../../contracts/container.js';
import type { SandboxNetwork } from '../../contracts/sandbox.js';
import { logger } from '../../logger.js';
import {
  type ContainerObservation,
  type ContainerRequest,
  ENGINE_DISCONNECTED,
  type NetworkObservation,
  LABEL_AGENT_SERVER_VERSION,
  LABEL_INSTALLATION,
  LABEL_INSTANCE,
  LABEL_PORT_PREFIX,
  LABEL_SANDBOX_ID,
  LABEL_SPEC_ID,
  ownerLabels,
  type RuntimeEvent,
  RuntimeError,
  type SandboxRuntime,
} from './runtime.js';
import { bridgeNameFor, formatCidr, type Ipv4Block, overlaps, parseCidr, parseRoutes, SANDBOX_SUBNET_PREFIX, subnetCandidates } from './sandbox-network.js';
import { dockerMessageOf, statusCodeOf, toRuntimeError } from './docker-errors.js';
import { createDockerSnapshots } from './docker-snapshots.js';
import { dockerDiskUsage } from './docker-disk-usage.js';
import { DEFAULT_LOG_ROTATION, type LogRotation, logConfigFor } from './container-logs.js';
import { LABEL_SPARE_NETWORK, SpareNetworks } from './docker-spare-networks.js';
import { createMemoryWatchdog } from './docker-memory-watchdog.js';
import { agentProcessLimit } from './agent-process-limit.js';
import { probeRuntimeOn } from './docker-runtime-probe.js';
import { tarOf } from './tar.js';
import { INITIAL_ENV_FILE } from '../../contracts/agent-server/initial-env.js';
import { imageIdOn } from '../image/image-id.js';

export interface DockerRuntimeOptions {
  /** Value of the instance label; only containers carrying it are listed, watched or touched. */
  instanceId: string;
  /**
   * The installation (database) this control plane serves: everything created carries it
   * (LABEL_INSTALLATION), and observations report each resource's, so that sweeps leave other
   * installations' alone. Unset, resources are labelled as by a release before the label.
   */
  installationId?: string;
  docker?: Docker;
  /** SANDBOX_NETWORK_POOL: the IPv4 block sandbox networks take their subnets from. */
  networkPool?: string;
  /** The host's routing table in /proc/net/route's format; '' when it cannot be read. */
  readRoutes?: () => Promise<string>;
  /** The trusted image whose `cp` copies data volumes for snapshots (the agent-server image). */
  copyImage?: string;
  /**
   * The host address sandbox ports are published on (the engine's advertise host); 127.0.0.1 by
   * default. Engines sharing one machine each publish on their own loopback address.
   */
  publishHost?: string;
  /**
   * SANDBOX_SPARE_NETWORKS: how many sandbox networks of each access to keep made ahead of need
   * (docker-spare-networks.ts), once a sandbox of that access was created. Default 0: none.
   */
  spareNetworks?: number;
  /** How much log each sandbox container keeps; DEFAULT_LOG_ROTATION when absent. */
  logRotation?: LogRotation;
}

export const DEFAULT_NETWORK_POOL = '10.213.0.0/16';

const WATCH_RECONNECT_MS = 1_000;
const NAME_CONFLICT_ATTEMPTS = 20;
const NAME_CONFLICT_WAIT_MS = 100;
/** Subnets the engine refused as taken (by a network the routing table did not show yet) before giving up for this pass. */
const SUBNET_ATTEMPTS = 8;

/**
 * The Docker driver. The container name is derived from the sandbox id so that the engine itself
 * refuses a second container for one sandbox (two control planes overlapping during a restart, a
 * create retried after a timeout): the loser gets 409 and adopts the winner's container.
 */
export function createDockerRuntime(options: DockerRuntimeOptions): SandboxRuntime {
  const docker = options.docker ?? new Docker();
  const { instanceId } = options;
  const owner = ownerLabels(instanceId, options.installationId);
  const publishHost = options.publishHost ?? '127.0.0.1';
  const logRotation = options.logRotation ?? DEFAULT_LOG_ROTATION;
  const log = logger.child({ component: 'docker-runtime' });
  const pool = networkPoolOf(options.networkPool ?? DEFAULT_NETWORK_POOL);
  const readRoutes = options.readRoutes ?? (() => readFile('/proc/net/route', 'utf8').catch(() => ''));
  /** Our sandboxes' containers: the instance label and a sandbox id (volume copies carry none). */
  const sandboxContainers = [`${LABEL_INSTANCE}=${instanceId}`, LABEL_SANDBOX_ID];
  const memoryWatchdog = createMemoryWatchdog({ docker, log });
  const spares = new SpareNetworks({ docker, owner, target: options.spareNetworks ?? 0, createNetwork: (name, access, labels) => createNetwork(name, access, labels), log });

  /** The networks labelled as this sandbox's, oldest first (two control planes may have raced to create one). */
  async function networksOf(sandboxId: string): Promise<Docker.NetworkInspectInfo[]> {
    try {
      const networks = await docker.listNetworks({ filters: { label: [`${LABEL_INSTANCE}=${instanceId}`, `${LABEL_SANDBOX_ID}=${sandboxId}`] } });
      return networks.sort((a, b) => a.Created.localeCompare(b.Created) || a.Id.localeCompare(b.Id));
    } catch (error) {
      throw toRuntimeError(error, 'list networks');
    }
  }

  /**
   * The sandbox's own network, created on first use or adopted (after a restart, or from a control
   * plane that created it at the same time); returns its id. Subnets the host already routes are
   * skipped, and one the engine says is taken moves on to the next.
   */
  async function ensureNetwork(request: ContainerRequest): Promise<string> {
    const { name, access } = request.network;
    const labels = { [LABEL_SANDBOX_ID]: request.sandboxId, ...owner };
    return createNetwork(name, access, labels, async (sameBridge) => {
      // The bridge is named after the network, so either conflict means another create of this
      // sandbox's network got there first (or a stranger holds the name).
      const ours = await winnerOf(async () => (await networksOf(request.sandboxId))[0]);
      if (ours) return ours.Id;
      throw new RuntimeError(`network name ${name} is taken by a network this control plane does not own`, !sameBridge);
    });
  }

  /**
   * Creates a sandbox network `name` carrying `labels`, on a /29 of the pool (starting at one derived
   * from the name); returns its id. Subnets the host already routes are skipped, and one the engine
   * says is taken moves on to the next; a name or bridge conflict is `onConflict`'s to settle.
   */
  async function createNetwork(
    name: string,
    access: SandboxNetwork,
    labels: Record<string, string>,
    onConflict: (sameBridge: boolean) => Promise<string> = (sameBridge) => Promise.reject(new RuntimeError(`network name ${name} is taken`, !sameBridge)),
  ): Promise<string> {
    const routed = parseRoutes(await readRoutes());
    let refused = 0;
    for (const subnet of subnetCandidates(name, pool)) {
      if (routed.some((route) => overlaps(route, subnet))) continue;
      try {
        const network = await docker.createNetwork({
          Name: name,
          CheckDuplicate: true,
          Driver: 'bridge',
          IPAM: { Driver: 'default', Config: [{ Subnet: formatCidr(subnet) }] },
          Options: { 'com.docker.network.bridge.name': bridgeNameFor(name, access) },
          Labels: labels,
        });
        return network.id;
      } catch (error) {
        const sameBridge = /same bridge name/i.test(dockerMessageOf(error));
        if (statusCodeOf(error) === 409 || sameBridge) return onConflict(sameBridge);
        if (/overlaps/i.test(dockerMessageOf(error)) && ++refused < SUBNET_ATTEMPTS) continue;
        throw toRuntimeError(error, 'create network');
      }
    }
    throw new RuntimeError(`no free /${SANDBOX_SUBNET_PREFIX} subnet is left in SANDBOX_NETWORK_POOL ${formatCidr(pool)}`, false);
  }

  /**
   * Containers the engine reported an `oom` event for, until they are destroyed. dockerd 20.10 sets
   * OOMKilled only when the event comes before the container's exit; under load (and under gVisor
   * often) it comes after, and the flag stays false for good although the kernel killed it.
   */
  const oomEvented = new Set<string>();

  async function inspect(containerId: string): Promise<ContainerObservation | undefined> {
    try {
      const observation = observationFromInspect(await docker.getContainer(containerId).inspect(), publishHost);
      return oomEvented.has(observation.containerId) ? { ...observation, oomKilled: true } : observation;
    } catch (error) {
      if (statusCodeOf(error) === 404) return undefined;
      throw toRuntimeError(error, 'inspect');
    }
  }

  async function start(containerId: string): Promise<void> {
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
  async function createAndStart(request: ContainerRequest): Promise<ContainerObservation> {
    const spare = spares.take(request.sandboxId, request.network.access);
    const network = spare ?? (await ensureNetwork(request));
    let containerId: string;
    const initialEnvFile = Object.keys(request.initialEnv).length > 0 && (await runsAgentServer(request.image));
    const env = initialEnvFile ? request.env : { ...request.initialEnv, ...request.env };
    try {
      const container = await docker.createContainer(
        createOptionsFor({ ...request, env }, owner, network, publishHost, spare === undefined ? {} : spares.containerLabels(spare), logRotation),
      );
      containerId = container.id;
    } catch (error) {
      if (statusCodeOf(error) === 409) return adoptByName(request);
      if (isMissingRuntime(error)) throw missingRuntime(`"${request.runtime}" is not registered`);
      // 400: the engine rejects the spec; 404: the image does not exist. Neither heals by retrying.
      throw toRuntimeError(error, 'create', [400, 404]);
    }
    if (initialEnvFile) await putInitialEnv(docker.getContainer(containerId), request.initialEnv);
    await start(containerId);
    const observation = await inspect(containerId);
    if (!observation) throw new RuntimeError(`container ${containerId} disappeared right after it started`, false);
    return observation;
  }

  /** Whether the image runs our agent-server (it carries the label of the image we build). */
  async function runsAgentServer(image: string): Promise<boolean> {
    try {
      return (await docker.getImage(image).inspect()).Config?.Labels?.[LABEL_AGENT_SERVER_VERSION] !== undefined;
    } catch (error) {
      // A missing image fails the create that follows, saying so.
      if (statusCodeOf(error) === 404) return false;
      throw toRuntimeError(error, 'image inspect');
    }
  }

  /**
   * Writes the spec's initial_env where only root reads it (INITIAL_ENV_FILE), before the container
   * starts; a container that cannot take it is removed, and the next pass creates it again.
   */
  async function putInitialEnv(container: Docker.Container, initialEnv: Record<string, string>): Promise<void> {
    const archive = tarOf([
      { path: `${dirname(INITIAL_ENV_FILE).slice(1)}/`, mode: 0o700 },
      { path: INITIAL_ENV_FILE.slice(1), mode: 0o600, content: Buffer.from(JSON.stringify(initialEnv)) },
    ]);
    try {
      await container.putArchive(archive, { path: '/' });
    } catch (error) {
      await container.remove({ force: true }).catch(() => undefined);
      throw toRuntimeError(error, 'put initial environment');
    }
  }

  /** The container that won a name conflict, if it is this sandbox's and ours. */
  async function adoptByName(request: ContainerRequest): Promise<ContainerObservation> {
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
    if (info.State.Status === 'created') await start(info.Id);
    return (await inspect(info.Id)) ?? observationFromInspect(info, publishHost);
  }

  return {
    ...createDockerSnapshots({ docker, instanceId, owner, copyImage: options.copyImage }),

    async runtimes() {
      try {
        return Object.keys((await docker.info()).Runtimes ?? {});
      } catch (error) {
        throw toRuntimeError(error, 'info');
      }
    },

    probeRuntime: (runtime, image) => probeRuntimeOn(docker, instanceId, runtime, image),

    async imageId(image) {
      try {
        return await imageIdOn(docker, image);
      } catch (error) {
        throw toRuntimeError(error, 'image inspect');
      }
    },

    async create(request) {
      try {
        return await createAndStart(request);
      } finally {
        spares.fill(request.network.access);
      }
    },

    start,

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

    diskUsage: (containerId, dataMountPath) => dockerDiskUsage(docker, containerId, dataMountPath),

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

    async removeVolume(name) {
      try {
        await docker.getVolume(name).remove();
      } catch (error) {
        if (statusCodeOf(error) === 404) return;
        throw toRuntimeError(error, 'remove volume');
      }
    },

    async removeNetworks(sandboxId) {
      for (const network of await networksOf(sandboxId)) {
        try {
          await docker.getNetwork(network.Id).remove();
        } catch (error) {
          // 404: already gone. Anything else (a container still attached) is retried by a later pass.
          if (statusCodeOf(error) !== 404) throw toRuntimeError(error, 'remove network');
        }
      }
      await spares.release(sandboxId);
    },

    close: async () => {
      memoryWatchdog.close();
      await spares.close();
    },

    async removeNetwork(name) {
      await spares.remove(name);
    },

    async listNetworks() {
      try {
        const networks = await docker.listNetworks({ filters: { label: [`${LABEL_INSTANCE}=${instanceId}`] } });
        const own = networks.filter((network) => network.Labels?.[LABEL_SPARE_NETWORK] === undefined);
        return [
          ...own.map(
            (network): NetworkObservation => ({
              name: network.Name,
              sandboxId: network.Labels?.[LABEL_SANDBOX_ID] ?? '',
              installation: network.Labels?.[LABEL_INSTALLATION],
            }),
          ),
          ...spares.observe(networks),
        ];
      } catch (error) {
        throw toRuntimeError(error, 'list networks');
      }
    },

    async listUnusedVolumes() {
      try {
        const { Volumes } = await docker.listVolumes({ filters: { label: [`${LABEL_INSTANCE}=${instanceId}`, LABEL_SANDBOX_ID], dangling: ['true'] } });
        return (Volumes ?? []).map((volume) => ({
          name: volume.Name,
          sandboxId: volume.Labels?.[LABEL_SANDBOX_ID] ?? '',
          installation: volume.Labels?.[LABEL_INSTALLATION],
        }));
      } catch (error) {
        throw toRuntimeError(error, 'list volumes');
      }
    },

    async list(sandboxId) {
      let containers: Docker.ContainerInfo[];
      const label = sandboxId === undefined ? sandboxContainers : [`${LABEL_INSTANCE}=${instanceId}`, `${LABEL_SANDBOX_ID}=${sandboxId}`];
      try {
        containers = await docker.listContainers({ all: true, filters: { label } });
      } catch (error) {
        throw toRuntimeError(error, 'list');
      }
      spares.noteContainers(containers);
      // Only a stopped container's OOMKilled flag changes what we report, and stopped containers
      // are few: one inspect each tells why they stopped.
      return Promise.all(
        containers.map((info) => observationFromListing(info, publishHost)).map(async (observation) =>
          observation.state === 'exited' ? ((await inspect(observation.containerId)) ?? observation) : observation,
        ),
      );
    },

    inspect,

    async logs(containerId, lines) {
      try {
        const output = await docker.getContainer(containerId).logs({ stdout: true, stderr: true, tail: lines, follow: false });
        return demultiplexLogs(Buffer.from(output));
      } catch (error) {
        if (statusCodeOf(error) === 404) return '';
        throw toRuntimeError(error, 'logs');
      }
    },

    watch(onEvent) {
      let stopped = false;
      let stream: NodeJS.ReadableStream | undefined;
      let retry: NodeJS.Timeout | undefined;

      const reconnect = () => {
        if (stopped || retry) return;
        retry = setTimeout(() => {
          retry = undefined;
          void connect();
        }, WATCH_RECONNECT_MS);
      };

      const connect = async () => {
        try {
          const events = await docker.getEvents({
            filters: { type: ['container'], label: sandboxContainers },
          });
          if (stopped) return destroyStream(events);
          stream = events;
          // Reported once per stream that was up: the engine (or our way to it) went away.
          const lost = () => {
            if (stream !== events) return;
            stream = undefined;
            if (!stopped) onEvent({ sandboxId: '', containerId: '', action: ENGINE_DISCONNECTED });
            reconnect();
          };
          let buffered = '';
          events.on('data', (chunk: Buffer) => {
            buffered += chunk.toString('utf8');
            const lines = buffered.split('\n');
            buffered = lines.pop() ?? '';
            for (const line of lines) {
              const event = parseEvent(line);
              if (!event) continue;
              if (event.action === 'oom') {
                oomEvented.add(event.containerId);
                memoryWatchdog.watch(event.containerId);
              }
              if (event.action === 'destroy') oomEvented.delete(event.containerId);
              onEvent(event);
            }
          });
          events.on('error', lost);
          events.on('close', lost);
          events.on('end', lost);
        } catch (error) {
          log.warn({ err: error }, 'docker event stream unavailable; retrying');
          reconnect();
        }
      };

      void connect();
      return () => {
        stopped = true;
        clearTimeout(retry);
        if (stream) destroyStream(stream);
      };
    },
  };
}

function networkPoolOf(cidr: string): Ipv4Block {
  const pool = parseCidr(cidr);
  if (!pool) throw new Error(`the network pool ${cidr} is not an IPv4 block`);
  return pool;
}

/** Docker names allow [a-zA-Z0-9_.-]; sandbox ids are expected to fit, and the engine says so when not. */
export function containerNameFor(sandboxId: string): string {
  return `sandbox-server-${sandboxId}`;
}

/** `network` is the id or name of the sandbox's network; `extraLabels` say which spare network that is. */
function createOptionsFor(
  request: ContainerRequest,
  owner: Record<string, string>,
  network: string,
  publishHost: string,
  extraLabels: Record<string, string>,
  logRotation: LogRotation,
): Docker.ContainerCreateOptions {
  const labels: Record<string, string> = {
    ...extraLabels,
    [LABEL_SANDBOX_ID]: request.sandboxId,
    [LABEL_SPEC_ID]: request.specId,
    ...owner,
  };
  const exposedPorts: Record<string, object> = {};
  const portBindings: Docker.PortMap = {};
  for (const port of request.exposedPorts) {
    labels[`${LABEL_PORT_PREFIX}${port.name}`] = String(port.container_port);
    exposedPorts[`${port.container_port}/tcp`] = {};
    // The engine's advertise host only (loopback by default), and HostPort empty so the engine
    // picks a free port atomically.
    portBindings[`${port.container_port}/tcp`] = [{ HostIp: publishHost, HostPort: '' }];
  }
  return {
    name: containerNameFor(request.sandboxId),
    Image: request.image,
    ...(request.command ? { Cmd: request.command } : {}),
    Env: Object.entries(request.env).map(([key, value]) => `${key}=${value}`),
    WorkingDir: request.workingDir,
    Labels: labels,
    ExposedPorts: exposedPorts,
    HostConfig: {
      // Its own network only: never Docker's default bridge, which every other container shares.
      NetworkMode: network,
      PortBindings: portBindings,
      Mounts: [
        {
          Type: 'volume',
          Source: request.dataVolume.name,
          Target: request.dataVolume.mountPath,
          // Labels let cleanup find the volume by its owner like the container.
          VolumeOptions: { NoCopy: false, Labels: { [LABEL_SANDBOX_ID]: request.sandboxId, ...owner }, DriverConfig: { Name: 'local', Options: {} } },
        },
      ],
      ...(request.cpus ? { NanoCpus: Math.round(request.cpus * 1e9) } : {}),
      ...(request.memoryMb ? { Memory: request.memoryMb * 1024 * 1024 } : {}),
      ...(request.pidsLimit ? { PidsLimit: request.pidsLimit } : {}),
      ...ulimitsFor(request),
      Runtime: request.runtime,
      Privileged: false,
      SecurityOpt: ['no-new-privileges:true'],
      // A tiny init as PID 1 reaps the zombies that the agent's shell tools leave behind.
      Init: true,
      RestartPolicy: { Name: 'no' },
      LogConfig: logConfigFor(logRotation),
    },
  };
}

/** The agent's own process limit, where the PIDs limit alone would end the whole sandbox (agent-process-limit.ts). */
function ulimitsFor(request: ContainerRequest): Pick<Docker.HostConfig, 'Ulimits'> {
  const limit = agentProcessLimit(request.runtime, request.pidsLimit);
  return limit === null ? {} : { Ulimits: [{ Name: 'nproc', Soft: limit, Hard: limit }] };
}

/**
 * What `find` finds of the winner of a name conflict (a container or network), asked again for a
 * short while: the engine reserves a name before it shows what took it. undefined if nothing shows.
 */
async function winnerOf<T>(find: () => Promise<T | undefined>): Promise<T | undefined> {
  for (let attempt = 0; ; attempt++) {
    const found = await find();
    if (found !== undefined || attempt >= NAME_CONFLICT_ATTEMPTS) return found;
    await sleep(NAME_CONFLICT_WAIT_MS);
  }
}

function observationFromInspect(info: Docker.ContainerInspectInfo, publishHost: string): ContainerObservation {
  const labels = info.Config.Labels ?? {};
  const state = containerStateOf(info.State.Status);
  const hostPorts: Record<string, number> = {};
  for (const [name, containerPort] of namedPortsOf(labels)) {
    const binding = info.NetworkSettings.Ports?.[`${containerPort}/tcp`]?.find((b) => b.HostIp === publishHost);
    if (binding?.HostPort) hostPorts[name] = Number(binding.HostPort);
  }
  return {
    containerId: info.Id,
    sandboxId: labels[LABEL_SANDBOX_ID] ?? '',
    installation: labels[LABEL_INSTALLATION],
    state,
    exitCode: state === 'exited' || state === 'dead' ? info.State.ExitCode : null,
    oomKilled: info.State.OOMKilled === true,
    hostPorts,
    agentServerVersion: labels[LABEL_AGENT_SERVER_VERSION] ?? null,
    finishedAt: state === 'exited' || state === 'dead' ? Date.parse(info.State.FinishedAt) || null : null,
  };
}

function observationFromListing(info: Docker.ContainerInfo, publishHost: string): ContainerObservation {
  const state = containerStateOf(info.State);
  const hostPorts: Record<string, number> = {};
  for (const [name, containerPort] of namedPortsOf(info.Labels)) {
    const port = info.Ports.find((p) => p.PrivatePort === containerPort && p.IP === publishHost && p.PublicPort);
    if (port) hostPorts[name] = port.PublicPort;
  }
  return {
    containerId: info.Id,
    sandboxId: info.Labels[LABEL_SANDBOX_ID] ?? '',
    installation: info.Labels[LABEL_INSTALLATION],
    state,
    // The listing carries the exit code only in its human status ("Exited (137) 2 seconds ago"),
    // a format Docker has kept stable; parsing it spares one inspect per stopped container per pass.
    exitCode: state === 'exited' ? exitCodeFromStatus(info.Status) : null,
    // Not in the listing; list() inspects the few stopped containers to fill it in.
    oomKilled: false,
    hostPorts,
    agentServerVersion: info.Labels[LABEL_AGENT_SERVER_VERSION] ?? null,
    finishedAt: null,
  };
}

function namedPortsOf(labels: Record<string, string>): [string, number][] {
  return Object.entries(labels)
    .filter(([key]) => key.startsWith(LABEL_PORT_PREFIX))
    .map(([key, value]) => [key.slice(LABEL_PORT_PREFIX.length), Number(value)]);
}

function containerStateOf(value: string): ContainerState {
  const state = CONTAINER_STATES.find((s) => s === value);
  // An unknown state from a newer engine is safest read as "not usable".
  return state ?? 'dead';
}

function exitCodeFromStatus(status: string): number | null {
  const match = /^Exited \((-?\d+)\)/.exec(status);
  return match?.[1] === undefined ? null : Number(match[1]);
}

/**
 * A container without a TTY sends its logs as frames: one byte naming the stream, three zero
 * bytes, a big-endian 32-bit length, then that many bytes. The text is what the frames carry.
 */
export function demultiplexLogs(output: Buffer): string {
  const chunks: Buffer[] = [];
  let offset = 0;
  while (offset + 8 <= output.length) {
    const length = output.readUInt32BE(offset + 4);
    chunks.push(output.subarray(offset + 8, offset + 8 + length));
    offset += 8 + length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseEvent(line: string): RuntimeEvent | undefined {
  if (!line.trim()) return undefined;
  try {
    const event = JSON.parse(line) as { Action?: string; status?: string; id?: string; Actor?: { ID?: string; Attributes?: Record<string, string> } };
    return {
      sandboxId: event.Actor?.Attributes?.[LABEL_SANDBOX_ID] ?? '',
      containerId: event.Actor?.ID ?? event.id ?? '',
      action: event.Action ?? event.status ?? '',
    };
  } catch {
    return undefined;
  }
}

function destroyStream(stream: NodeJS.ReadableStream): void {
  (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
}

function isMissingRuntime(error: unknown): boolean {
  return /unknown runtime/i.test(dockerMessageOf(error));
}

/** The spec names a runtime the engine no longer has (runsc unregistered): final until it is back. */
function missingRuntime(why: string): RuntimeError {
  return new RuntimeError(`the sandbox's runtime is missing from the Docker engine (${why}): register it with dockerd again, or delete this sandbox`, true);
}
