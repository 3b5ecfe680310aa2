import { access } from 'node:fs/promises';
import type { Registry } from 'prom-client';
import type { Logger } from '../../logger.js';
import { type EgressLists, egressRulesOf, hostPortsOf } from '../net/egress-policy.js';
import { type AllowlistSandbox, allowlistRestore, applyAllowlistRules, type EgressListeners, readDeniedCounters, removeAllowlistRules } from '../runtime/allowlist-rules.js';
import { type RunCommand, runCommand } from '../runtime/run-command.js';
import { EgressDenials } from './denials.js';
import { EgressDns } from './dns-server.js';
import { HostRelays } from './host-relay.js';
import { type ConnectHandler, type EgressDenial, EgressProxy, type EgressSandbox, type EgressTarget } from './proxy.js';
import { createUpstreamResolver } from './upstream.js';

/** An `allowlist` sandbox as the database has it: its policy (its own, else its spec's). */
export interface AllowlistPolicy {
  sandboxId: string;
  egress: EgressLists;
}

/** Where a running sandbox's container is on its own network, as its engine reports it. */
export interface SandboxAddress {
  sandboxId: string;
  bridge: string;
  address: string;
  gateway: string;
}

export interface EgressGatewayOptions {
  /** SANDBOX_EGRESS_HOSTS (upstream.ts). */
  hosts: Readonly<Record<string, string>>;
  /** SANDBOX_HOST_ADDRESS (upstream.ts). */
  hostAddress: string;
  loadPolicies: () => Promise<AllowlistPolicy[]>;
  /** The addresses of the sandboxes this replica runs on engines of this machine. */
  listAddresses: () => Promise<SandboxAddress[]>;
  recordDenied: (sandboxId: string, detail: string) => Promise<void>;
  registry: Registry;
  /** Per allowed tunnel: a handler to take it instead of the byte pipe (see EgressProxy). */
  interceptConnect?: (target: EgressTarget) => ConnectHandler | undefined;
  intervalMs: number;
  run?: RunCommand;
  log: Logger;
}

/** Passes between two sweeps of chains whose bridge is gone (a control plane that died with sandboxes). */
const SWEEP_EVERY = 30;
const PACKET_DENIAL: Omit<EgressDenial, 'sandboxId'> = { via: 'packet', target: 'an address or port its policy does not allow', reason: 'refused by the packet filter' };

/**
 * What enforces `allowlist` policies on this machine: the egress proxy, the resolver and the host
 * relays (listening on every address, answering only sandboxes they know by source address), and
 * the packet rules of each sandbox, kept in step with the database and the engines by a pass every
 * `intervalMs` (and at once on kick, after a PATCH). A sandbox with no rules yet reaches nothing.
 */
export class EgressGateway {
  readonly #options: EgressGatewayOptions;
  readonly #run: RunCommand;
  readonly #denials: EgressDenials;
  readonly #proxy: EgressProxy;
  readonly #dns: EgressDns;
  readonly #relays: HostRelays;
  #listeners: Omit<EgressListeners, 'hostRelays'> | undefined;
  /** Source address -> the sandbox, for the listeners. */
  #byAddress = new Map<string, EgressSandbox>();
  /** Bridge -> the restore text last applied, and whose it is. */
  readonly #applied = new Map<string, { text: string; sandboxId: string }>();
  readonly #packetCounts = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #pass: Promise<void> | undefined;
  #again = false;
  #passes = 0;
  #stopped = false;

  constructor(options: EgressGatewayOptions) {
    this.#options = options;
    this.#run = options.run ?? runCommand;
    const identify = (address: string) => this.#byAddress.get(address);
    const onDenied = (denial: EgressDenial) => this.#denials.add(denial);
    this.#denials = new EgressDenials({ registry: options.registry, recordEvent: options.recordDenied, log: options.log });
    this.#proxy = new EgressProxy({
      identify,
      onDenied,
      resolveUpstream: createUpstreamResolver({ hosts: options.hosts, hostAddress: options.hostAddress }),
      interceptConnect: options.interceptConnect,
      log: options.log,
    });
    this.#dns = new EgressDns({ identify, onDenied });
    this.#relays = new HostRelays({ listenHost: '0.0.0.0', hostAddress: options.hostAddress, identify, onDenied });
  }

  async start(): Promise<void> {
    const { port, transparentPort } = await this.#proxy.listen('0.0.0.0', 0, 0);
    const dns = await this.#dns.listen('0.0.0.0', 0);
    this.#listeners = { proxy: port, transparent: transparentPort, dns };
    this.#options.log.info({ proxyPort: port, transparentPort, dnsPort: dns }, 'egress proxy and resolver listening for allowlist sandboxes');
    await this.kick();
  }

  /** Runs a pass now (or right after the one under way); resolves when it is done. */
  kick(): Promise<void> {
    if (this.#pass) {
      this.#again = true;
      return this.#pass;
    }
    clearTimeout(this.#timer);
    this.#pass = this.#sync()
      .catch((err: unknown) => this.#options.log.warn({ err }, 'could not bring the egress rules of allowlist sandboxes up to date; retrying'))
      .finally(() => {
        this.#pass = undefined;
        if (this.#stopped) return;
        if (this.#again) {
          this.#again = false;
          void this.kick();
        } else {
          this.#timer = setTimeout(() => void this.kick(), this.#options.intervalMs);
        }
      });
    return this.#pass;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#pass;
    this.#denials.close();
    await Promise.all([this.#proxy.close(), this.#dns.close(), this.#relays.close()]);
  }

  async #sync(): Promise<void> {
    const listeners = this.#listeners;
    if (!listeners) return;
    const policies = new Map((await this.#options.loadPolicies()).map((policy) => [policy.sandboxId, egressRulesOf(policy.egress)]));
    const addresses = policies.size > 0 ? await this.#options.listAddresses() : [];
    const wanted = new Map<string, AllowlistSandbox & { sandboxId: string }>();
    for (const { sandboxId, bridge, address, gateway } of addresses) {
      const rules = policies.get(sandboxId);
      if (rules) wanted.set(bridge, { sandboxId, bridge, address, gateway, rules, hostPorts: hostPortsOf(rules) });
    }
    this.#byAddress = new Map([...wanted.values()].map(({ sandboxId, address, gateway, rules }) => [address, { sandboxId, rules, gateway }]));
    await this.#relays.keep(new Set([...wanted.values()].flatMap((sandbox) => sandbox.hostPorts)));
    const all = { ...listeners, hostRelays: this.#relays.ports() };
    for (const [bridge, sandbox] of wanted) {
      const text = allowlistRestore(sandbox, all);
      if (this.#applied.get(bridge)?.text === text) continue;
      await applyAllowlistRules(this.#run, sandbox, all);
      this.#applied.set(bridge, { text, sandboxId: sandbox.sandboxId });
    }
    for (const [bridge, { sandboxId }] of this.#applied) {
      if (wanted.has(bridge)) continue;
      await removeAllowlistRules(this.#run, bridge);
      this.#applied.delete(bridge);
      this.#packetCounts.delete(bridge);
      if (!policies.has(sandboxId)) this.#denials.forget(sandboxId);
    }
    if (this.#applied.size > 0 || this.#passes % SWEEP_EVERY === 0) await this.#countAndSweep();
    this.#passes++;
  }

  /** Counts the packets each sandbox's chains refused since the last pass; removes chains whose bridge is gone. */
  async #countAndSweep(): Promise<void> {
    const saved = String(await this.#run('iptables-save', ['-c', '-t', 'filter']));
    for (const [bridge, count] of readDeniedCounters(saved)) {
      const ours = this.#applied.get(bridge);
      if (ours) {
        const before = this.#packetCounts.get(bridge) ?? 0;
        this.#packetCounts.set(bridge, count);
        if (count > before) this.#denials.add({ sandboxId: ours.sandboxId, ...PACKET_DENIAL }, count - before);
      } else if (this.#passes % SWEEP_EVERY === 0 && !(await bridgeExists(bridge))) {
        await removeAllowlistRules(this.#run, bridge);
      }
    }
  }
}

function bridgeExists(bridge: string): Promise<boolean> {
  return access(`/sys/class/net/${bridge}`).then(
    () => true,
    () => false,
  );
}
