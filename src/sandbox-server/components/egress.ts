import type Docker from 'dockerode';
import type { Registry } from 'prom-client';
import type { Logger } from '../../logger.js';
import type { SandboxServerConfig } from '../config.js';
import type { DatabaseHandle } from '../db/client.js';
import { EgressGateway, type SandboxAddress } from '../egress/egress-gateway.js';
import type { EngineRegistry } from '../engines/registry.js';
import { recordEvent } from '../lifecycle-events/record-event.js';
import { dockerFor } from '../runtime/docker-for.js';
import { LABEL_INSTANCE, LABEL_SANDBOX_ID } from '../runtime/runtime.js';
import { bridgeNameFor } from '../runtime/sandbox-network.js';
import { listAllowlistPolicies } from '../services/egress/sandbox-egress-view.js';
import type { Component } from './component.js';
import { type Broker, createBroker } from '../broker/index.js';
import type { CaMaterial } from '../broker/certificate-authority.js';

export interface EgressComponentOptions {
  config: SandboxServerConfig;
  database: DatabaseHandle;
  engines: EngineRegistry;
  registry: Registry;
  /** Why the host firewall could not be installed (components/runtimes.ts); the gateway needs it. */
  firewallProblem: string | null;
  /** Tests pass their own runtime, with no containers on any engine: nothing to enforce then. */
  runtimePassedIn: boolean;
  /** The installation's CA: the egress proxy terminates TLS under it for brokered secrets' hosts (broker/). */
  installationCa: CaMaterial;
  log: Logger;
}

/**
 * The egress gateway of `allowlist` sandboxes (egress/egress-gateway.ts), for the engines of this
 * machine whose reconciler this replica runs (their sandboxes' bridges are in this host's
 * firewall). Undefined when it cannot enforce anything: without the host firewall, such sandboxes
 * reach nothing at all, which their rules' absence already ensures.
 */
export function egressComponent(options: EgressComponentOptions): Component<EgressGateway | undefined> {
  const { config, database, engines, log } = options;
  let gateway: EgressGateway | undefined;
  let broker: Broker | undefined;
  const clients = new Map<string, Docker>();
  const listAddresses = async (): Promise<SandboxAddress[]> => {
    const found: SandboxAddress[] = [];
    for (const handle of engines.handles()) {
      if (!handle.lease.held || !isLocalEngine(handle.row.dockerUrl)) continue;
      const docker = clients.get(handle.row.dockerUrl) ?? dockerFor(handle.row, config.DOCKER_TLS_CERT_DIR);
      clients.set(handle.row.dockerUrl, docker);
      const containers = await docker.listContainers({ filters: { label: [`${LABEL_INSTANCE}=${config.SANDBOX_SERVER_INSTANCE}`] } });
      for (const container of containers) {
        const sandboxId = container.Labels[LABEL_SANDBOX_ID];
        if (!sandboxId) continue;
        for (const [network, settings] of Object.entries(container.NetworkSettings?.Networks ?? {})) {
          if (settings.IPAddress && settings.Gateway) found.push({ sandboxId, bridge: bridgeNameFor(network, 'allowlist'), address: settings.IPAddress, gateway: settings.Gateway });
        }
      }
    }
    return found;
  };
  return {
    name: 'egress',
    async start() {
      if (options.runtimePassedIn || options.firewallProblem) return undefined;
      broker = await createBroker({ db: database.db, ca: options.installationCa, extraCaFile: config.SANDBOX_EGRESS_CA_FILE, log: log.child({ component: 'broker' }) });
      gateway = new EgressGateway({
        hosts: config.SANDBOX_EGRESS_HOSTS,
        hostAddress: config.SANDBOX_HOST_ADDRESS,
        loadPolicies: () => listAllowlistPolicies(database.db),
        listAddresses,
        recordDenied: (sandboxId, detail) =>
          database.db.transaction((tx) =>
            recordEvent(tx, { type: 'sandbox.egress_denied', subjectKind: 'sandbox', subjectId: sandboxId, sandboxId, previousStatus: null, status: null, statusDetail: detail }),
          ),
        registry: options.registry,
        intervalMs: Math.min(config.RECONCILE_INTERVAL_MS, 1000),
        interceptConnect: broker.interceptConnect,
        log: log.child({ component: 'egress' }),
      });
      await gateway.start();
      return gateway;
    },
    async stop() {
      await gateway?.stop();
      broker?.close();
    },
  };
}

/** An engine on this machine (a unix socket): its bridges are this host's, and so are their firewall rules. */
function isLocalEngine(dockerUrl: string): boolean {
  return !/^(tcp|ssh|https?):\/\//.test(dockerUrl);
}
