import { readFile } from 'node:fs/promises';
import type Docker from 'dockerode';
import type { SandboxNetwork } from '../../contracts/sandbox.js';
import type { Logger } from '../../logger.js';
import { dockerMessageOf, statusCodeOf, toRuntimeError } from './docker-errors.js';
import { winnerOf } from './docker-name-conflicts.js';
import { LABEL_SPARE_NETWORK, SpareNetworks } from './docker-spare-networks.js';
import {
  type ContainerRequest,
  LABEL_INSTALLATION,
  LABEL_INSTANCE,
  LABEL_SANDBOX_ID,
  type NetworkObservation,
  RuntimeError,
  type SandboxRuntime,
} from './runtime.js';
import { bridgeNameFor, formatCidr, type Ipv4Block, overlaps, parseCidr, parseRoutes, SANDBOX_SUBNET_PREFIX, subnetCandidates } from './sandbox-network.js';

const DEFAULT_NETWORK_POOL = '10.213.0.0/16';

/** Subnets the engine refused as taken (by a network the routing table did not show yet) before giving up for this pass. */
const SUBNET_ATTEMPTS = 8;

export interface DockerNetworksOptions {
  docker: Docker;
  instanceId: string;
  /** The labels naming the owner (ownerLabels), carried by every network made. */
  owner: Record<string, string>;
  /** SANDBOX_NETWORK_POOL: the IPv4 block sandbox networks take their subnets from. */
  networkPool?: string;
  /** The host's routing table in /proc/net/route's format; '' when it cannot be read. */
  readRoutes?: () => Promise<string>;
  /** How many spare networks of each access to keep made ahead of need (docker-spare-networks.ts). */
  spareNetworks: number;
  log: Logger;
}

/** The runtime's network verbs, and what container creation needs of networks. */
export interface DockerNetworks extends Pick<SandboxRuntime, 'removeNetworks' | 'removeNetwork' | 'listNetworks'> {
  spares: SpareNetworks;
  /**
   * The sandbox's own network, created on first use or adopted (after a restart, or from a control
   * plane that created it at the same time); returns its id.
   */
  ensureNetwork(request: ContainerRequest): Promise<string>;
  close(): Promise<void>;
}

interface NetworkContext {
  docker: Docker;
  instanceId: string;
  pool: Ipv4Block;
  readRoutes: () => Promise<string>;
}

export function createDockerNetworks(options: DockerNetworksOptions): DockerNetworks {
  const { docker, instanceId, owner } = options;
  const context: NetworkContext = {
    docker,
    instanceId,
    pool: networkPoolOf(options.networkPool ?? DEFAULT_NETWORK_POOL),
    readRoutes: options.readRoutes ?? (() => readFile('/proc/net/route', 'utf8').catch(() => '')),
  };
  const spares = new SpareNetworks({
    docker,
    owner,
    target: options.spareNetworks,
    createNetwork: (name, access, labels) => createNetwork(context, name, access, labels),
    log: options.log,
  });
  return {
    spares,
    ensureNetwork: (request) => ensureNetwork(context, owner, request),
    async removeNetworks(sandboxId) {
      await removeNetworksOf(context, sandboxId);
      await spares.release(sandboxId);
    },
    removeNetwork: (name) => spares.remove(name),
    listNetworks: () => listNetworks(context, spares),
    close: () => spares.close(),
  };
}

/** The networks labelled as this sandbox's, oldest first (two control planes may have raced to create one). */
async function networksOf({ docker, instanceId }: NetworkContext, sandboxId: string): Promise<Docker.NetworkInspectInfo[]> {
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
function ensureNetwork(context: NetworkContext, owner: Record<string, string>, request: ContainerRequest): Promise<string> {
  const { name, access } = request.network;
  const labels = { [LABEL_SANDBOX_ID]: request.sandboxId, ...owner };
  return createNetwork(context, name, access, labels, async (sameBridge) => {
    // The bridge is named after the network, so either conflict means another create of this
    // sandbox's network got there first (or a stranger holds the name).
    const ours = await winnerOf(async () => (await networksOf(context, request.sandboxId))[0]);
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
  { docker, pool, readRoutes }: NetworkContext,
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

async function removeNetworksOf(context: NetworkContext, sandboxId: string): Promise<void> {
  for (const network of await networksOf(context, sandboxId)) {
    try {
      await context.docker.getNetwork(network.Id).remove();
    } catch (error) {
      // 404: already gone. Anything else (a container still attached) is retried by a later pass.
      if (statusCodeOf(error) !== 404) throw toRuntimeError(error, 'remove network');
    }
  }
}

async function listNetworks({ docker, instanceId }: NetworkContext, spares: SpareNetworks): Promise<NetworkObservation[]> {
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
}

function networkPoolOf(cidr: string): Ipv4Block {
  const pool = parseCidr(cidr);
  if (!pool) throw new Error(`the network pool ${cidr} is not an IPv4 block`);
  return pool;
}
