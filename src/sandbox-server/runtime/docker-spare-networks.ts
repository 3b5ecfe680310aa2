import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import type { SandboxNetwork } from '../../contracts/sandbox.js';
import type { Logger } from '../../logger.js';
import { statusCodeOf, toRuntimeError } from './docker-errors.js';
import { LABEL_INSTALLATION, LABEL_SANDBOX_ID, type NetworkObservation } from './runtime.js';

/** On a spare network: the control plane process that made it (its token), and what it reaches. */
export const LABEL_SPARE_NETWORK = 'sandbox-server.spare-network';
export const LABEL_NETWORK_ACCESS = 'sandbox-server.network-access';
/** On a container created on a spare network: that network's name, so it is found again after a restart. */
export const LABEL_NETWORK = 'sandbox-server.network';

/** Failed spare creates in a row before a fill gives up until the next call, and the first pause between them. */
const FILL_ATTEMPTS = 5;
const FILL_RETRY_MS = 200;

export interface SpareNetworksOptions {
  docker: Docker;
  /** The labels naming the owner (ownerLabels), carried by every spare. */
  owner: Record<string, string>;
  /** How many spares of each access (internet, none, allowlist) to keep ready once one was asked for; 0 keeps none. */
  target: number;
  /** Creates a sandbox network (its bridge and subnet as any sandbox's) carrying `labels`; returns its id. */
  createNetwork: (name: string, access: SandboxNetwork, labels: Record<string, string>) => Promise<string>;
  log: Logger;
}

/**
 * Sandbox networks made ahead of need, so that a sandbox's create does not wait for its network:
 * creating a bridge network costs dockerd about 100 ms (more under load), and dockerd creates
 * networks one at a time, so a burst of creates would queue behind them.
 *
 * A spare is built like a sandbox's own network (a bridge named for its access, a /29 of the pool)
 * but named and labelled for this process (a token drawn when it starts) instead of for a sandbox.
 * Taking one is synchronous, so two creates never take the same one; and only the process that made
 * a spare takes it, so two control planes sharing an engine (a rolling restart) never share one.
 * The container created on it carries LABEL_NETWORK naming it, which finds it again after a restart.
 * A spare serves one sandbox only (no address, rule or neighbour entry of one sandbox is ever seen
 * by the next): it is removed with its sandbox. A spare that no container names and that this
 * process does not keep ready is reported without a sandbox, so the orphan sweep removes it after
 * its grace: this is how a previous process's spares go.
 */
export class SpareNetworks {
  readonly #options: SpareNetworksOptions;
  readonly #token = randomBytes(6).toString('hex');
  #count = 0;
  /** Ready spares of this process, by access; not in use by any sandbox. */
  #ready: Record<SandboxNetwork, string[]> = { internet: [], none: [], allowlist: [] };
  /** The fill under way for each access. */
  readonly #filling = new Map<SandboxNetwork, Promise<void>>();
  #closed = false;
  /** Spare network name -> the sandbox using it (taken here, or seen on a listed container). */
  readonly #inUse = new Map<string, string>();

  constructor(options: SpareNetworksOptions) {
    this.#options = options;
  }

  /** The spare network the sandbox already uses, or a ready one taken for it; undefined when none is ready. */
  take(sandboxId: string, access: SandboxNetwork): string | undefined {
    for (const [name, user] of this.#inUse) if (user === sandboxId) return name;
    const name = this.#ready[access].shift();
    if (name !== undefined) this.#inUse.set(name, sandboxId);
    return name;
  }

  /** Labels the container gets when it is created on the spare `name`. */
  containerLabels(name: string): Record<string, string> {
    return { [LABEL_NETWORK]: name };
  }

  /** Notes the spares our listed containers are on: what a restart forgot it had taken. */
  noteContainers(containers: readonly Docker.ContainerInfo[]): void {
    for (const container of containers) {
      const network = container.Labels[LABEL_NETWORK];
      const sandboxId = container.Labels[LABEL_SANDBOX_ID];
      if (network && sandboxId) this.#inUse.set(network, sandboxId);
    }
  }

  /**
   * The spares among our labelled networks, as the orphan sweep sees them: a ready one of this
   * process is left out; one in use is its sandbox's; any other belongs to no sandbox.
   */
  observe(networks: readonly Docker.NetworkInspectInfo[]): NetworkObservation[] {
    const ready = new Set(Object.values(this.#ready).flat());
    return networks
      .filter((network) => network.Labels?.[LABEL_SPARE_NETWORK] !== undefined && !ready.has(network.Name))
      .map((network) => ({ name: network.Name, sandboxId: this.#inUse.get(network.Name) ?? '', installation: network.Labels?.[LABEL_INSTALLATION] }));
  }

  /** Once the sandbox's containers are gone, removes the spare it used (a spare serves one sandbox only). */
  async release(sandboxId: string): Promise<void> {
    for (const [name, user] of [...this.#inUse]) if (user === sandboxId) await this.remove(name);
  }

  /** Removes the network `name`, a spare or any other listNetworks reported (refused while a container is attached); a missing one is success. */
  async remove(name: string): Promise<void> {
    try {
      await this.#options.docker.getNetwork(name).remove();
    } catch (error) {
      if (statusCodeOf(error) !== 404) throw toRuntimeError(error, 'remove network');
    }
    this.#inUse.delete(name);
  }

  /**
   * Creates spares of `access`, one at a time, until `target` are ready. A failed create (a subnet
   * another engine took meanwhile, a busy engine) is tried again after a growing pause; after
   * FILL_ATTEMPTS failures in a row the fill waits for the next call. Called once a create has
   * started its container, not when it takes a spare: making a network holds the engine's network
   * locks, which the container's start needs too.
   */
  fill(access: SandboxNetwork): void {
    if (this.#closed || this.#filling.has(access) || this.#ready[access].length >= this.#options.target) return;
    const filling = (async () => {
      let failures = 0;
      try {
        while (!this.#closed && this.#ready[access].length < this.#options.target) {
          const name = `sandbox-server-spare-${this.#token}-${++this.#count}`;
          try {
            await this.#options.createNetwork(name, access, {
              ...this.#options.owner,
              [LABEL_SPARE_NETWORK]: this.#token,
              [LABEL_NETWORK_ACCESS]: access,
            });
          } catch (error) {
            if (++failures >= FILL_ATTEMPTS) {
              this.#options.log.warn({ err: error, access, failures }, 'could not create a spare network; creates make their own until the next try');
              return;
            }
            await new Promise((resolve) => setTimeout(resolve, FILL_RETRY_MS * 2 ** (failures - 1)));
            continue;
          }
          failures = 0;
          this.#ready[access].push(name);
        }
      } finally {
        this.#filling.delete(access);
      }
    })();
    this.#filling.set(access, filling);
  }

  /**
   * Stops making spares, waits for a create under way, and removes the ready ones: no later process
   * takes another's spares, and a network whose create ends after its process stopped would
   * otherwise wait for the next process's sweep (forever, for a test's control plane).
   */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#filling.values());
    const ready = Object.values(this.#ready).flat();
    this.#ready = { internet: [], none: [], allowlist: [] };
    for (const name of ready) {
      await this.remove(name).catch((error: unknown) => this.#options.log.warn({ err: error, network: name }, 'could not remove a spare network at stop; the next sweep does'));
    }
  }
}
