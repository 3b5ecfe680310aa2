import Docker from 'dockerode';
import { logger } from '../../logger.js';
import { DEFAULT_LOG_ROTATION, type LogRotation } from './container-logs.js';
import { createDockerContainers } from './docker-containers.js';
import { toRuntimeError } from './docker-errors.js';
import { createDockerEvents } from './docker-events.js';
import { createDockerNetworks } from './docker-networks.js';
import { probeRuntimeOn } from './docker-runtime-probe.js';
import { createDockerSnapshots } from './docker-snapshots.js';
import { createDockerVolumes } from './docker-volumes.js';
import { dockerDiskUsage } from './docker-disk-usage.js';
import { takesNewConnections } from './docker-new-connection.js';
import { LABEL_INSTANCE, LABEL_SANDBOX_ID, ownerLabels, type SandboxRuntime } from './runtime.js';
import { imageIdOn } from './image-id.js';
import { agentBundles } from './agent-bundle.js';
import { imageChecker } from './image-fitness.js';
import { imagePuller, type RegistryAuth } from './image-pull.js';

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
  /** The agent-server image, whose bundle is brought into sandboxes of other images (agent-bundle.ts). */
  agentServerImage?: string;
  /** REGISTRY_AUTH: credentials per registry host for the images sandboxes need pulled (image-pull.ts). */
  registryAuth?: RegistryAuth;
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
  /** The installation CA's certificate (PEM), installed in every sandbox at its creation; absent, none. */
  trustedCa?: string;
}

/**
 * The Docker driver, assembled from its rooms: networks (each sandbox's own, and spares), containers
 * (create, adopt and the lifecycle verbs), events (the watcher and what it remembers of OOM kills),
 * volumes, and snapshots.
 */
export function createDockerRuntime(options: DockerRuntimeOptions): SandboxRuntime {
  const docker = options.docker ?? new Docker();
  const { instanceId } = options;
  const owner = ownerLabels(instanceId, options.installationId);
  const log = logger.child({ component: 'docker-runtime' });
  /** Our sandboxes' containers: the instance label and a sandbox id (volume copies carry none). */
  const sandboxContainers = [`${LABEL_INSTANCE}=${instanceId}`, LABEL_SANDBOX_ID];
  const events = createDockerEvents({ docker, sandboxContainers, log });
  const networks = createDockerNetworks({
    docker,
    instanceId,
    owner,
    networkPool: options.networkPool,
    readRoutes: options.readRoutes,
    spareNetworks: options.spareNetworks ?? 0,
    log,
  });
  const containers = createDockerContainers({
    docker,
    instanceId,
    owner,
    publishHost: options.publishHost ?? '127.0.0.1',
    logRotation: options.logRotation ?? DEFAULT_LOG_ROTATION,
    sandboxContainers,
    networks,
    events,
    bundles: agentBundles(docker, options.agentServerImage),
    trustedCa: options.trustedCa,
  });
  const images = imageChecker(docker, owner);
  const puller = imagePuller(docker, options.registryAuth ?? {}, log);

  return {
    ...createDockerSnapshots({ docker, instanceId, owner, copyImage: options.copyImage }),
    ...containers,
    ...createDockerVolumes(docker, instanceId),
    removeNetworks: (sandboxId) => networks.removeNetworks(sandboxId),
    removeNetwork: (name) => networks.removeNetwork(name),
    listNetworks: () => networks.listNetworks(),
    watch: (onEvent) => events.watch(onEvent),
    diskUsage: (containerId, dataMountPath) => dockerDiskUsage(docker, containerId, dataMountPath),
    probeRuntime: (runtime, image) => probeRuntimeOn(docker, instanceId, runtime, image),
    takesNewConnections: () => takesNewConnections(docker),

    async runtimes() {
      try {
        return Object.keys((await docker.info()).Runtimes ?? {});
      } catch (error) {
        throw toRuntimeError(error, 'info');
      }
    },

    checkImage: (image) => images.check(image),

    ensureImage: (image, onProgress) => puller.ensure(image, onProgress),

    async imageId(image) {
      try {
        return await imageIdOn(docker, image);
      } catch (error) {
        throw toRuntimeError(error, 'image inspect');
      }
    },

    close: async () => {
      events.close();
      await networks.close();
    },
  };
}
