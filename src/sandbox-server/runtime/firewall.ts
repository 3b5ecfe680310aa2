import { readFile } from 'node:fs/promises';
import { installAllowlistDispatch } from './allowlist-firewall.js';
import { type RunCommand, runCommand } from './run-command.js';
import { EGRESS_CHAIN, type EgressPolicy, egressChainRestore, parseNameservers } from './egress.js';
import { EVERY_SANDBOX_BRIDGE, OFFLINE_SANDBOX_BRIDGE, ONLINE_SANDBOX_BRIDGE } from './sandbox-network.js';

/**
 * The host firewall rules that keep sandboxes apart from the host and each other. Docker already
 * drops traffic between its bridges (its DOCKER-ISOLATION chains), but not traffic a container
 * sends to the host's own addresses (the bridge gateway, docker0, the LAN address), which the
 * host's INPUT chain accepts, nor traffic out of a network that should reach nothing.
 *
 * The rules match sandbox bridges by name (see sandbox-network.ts), so these few cover every sandbox
 * network now and later: they are installed once at start, idempotently, by any control plane on
 * the machine, and never removed (with no sandbox bridge they match nothing). Replies to
 * connections the host opened (the control plane reaching an agent-server through its published
 * 127.0.0.1 port) are ESTABLISHED and pass.
 *
 * What an `internet` sandbox sends beyond the machine goes through one chain of ours (egress.ts),
 * which refuses private and link-local ranges; its content follows the settings, so it is rewritten
 * at every start. `allowlist` sandboxes have chains of their own (allowlist-firewall.ts).
 */
export interface FirewallRule {
  binary: 'iptables' | 'ip6tables';
  chain: string;
  rule: string[];
}

const COMMENT = ['-m', 'comment', '--comment'];
const NEW_CONNECTIONS = ['-m', 'conntrack', '!', '--ctstate', 'ESTABLISHED,RELATED'];

export const FIREWALL_RULES: readonly FirewallRule[] = [
  {
    binary: 'iptables',
    chain: 'INPUT',
    rule: ['-i', EVERY_SANDBOX_BRIDGE, ...NEW_CONNECTIONS, ...COMMENT, 'sandbox-server: no sandbox connects to the host', '-j', 'DROP'],
  },
  // Link-local IPv6 reaches the host even on networks without IPv6 addresses.
  {
    binary: 'ip6tables',
    chain: 'INPUT',
    rule: ['-i', EVERY_SANDBOX_BRIDGE, ...NEW_CONNECTIONS, ...COMMENT, 'sandbox-server: no sandbox connects to the host', '-j', 'DROP'],
  },
  // Docker's isolation covers its own bridges; this covers sandboxes of another engine on the machine.
  {
    binary: 'iptables',
    chain: 'DOCKER-USER',
    rule: ['-i', EVERY_SANDBOX_BRIDGE, '-o', EVERY_SANDBOX_BRIDGE, ...COMMENT, 'sandbox-server: no sandbox reaches another', '-j', 'DROP'],
  },
  {
    binary: 'iptables',
    chain: 'DOCKER-USER',
    rule: ['-i', OFFLINE_SANDBOX_BRIDGE, ...COMMENT, 'sandbox-server: network none reaches nothing', '-j', 'DROP'],
  },
  {
    binary: 'iptables',
    chain: 'DOCKER-USER',
    rule: ['-i', ONLINE_SANDBOX_BRIDGE, ...COMMENT, 'sandbox-server: internet means the internet', '-j', EGRESS_CHAIN],
  },
  // dockerd makes no DOCKER-USER for IPv6 unless IPv6 is on; FORWARD is always there.
  {
    binary: 'ip6tables',
    chain: 'FORWARD',
    rule: ['-i', ONLINE_SANDBOX_BRIDGE, ...COMMENT, 'sandbox-server: internet means the internet', '-j', EGRESS_CHAIN],
  },
];

export { type RunCommand, runCommand } from './run-command.js';

export interface FirewallOptions {
  run?: RunCommand;
  /** SANDBOX_INTERNET_ALLOW: private blocks `internet` sandboxes may reach after all. */
  allow?: readonly string[];
  /** The host's resolv.conf (and systemd-resolved's, when that names only its stub). */
  readResolvConf?: () => Promise<string>;
}

/**
 * Writes the egress chain for both families, then adds each missing rule at the top of its chain.
 * Resolves to null when every rule is in place, or to why not (no iptables, not root, dockerd
 * without its iptables chains): the caller says so once.
 */
export async function installFirewall(options: FirewallOptions = {}): Promise<string | null> {
  const run = options.run ?? runCommand;
  try {
    const policy: EgressPolicy = { allow: options.allow ?? [], nameservers: parseNameservers(await (options.readResolvConf ?? readHostResolvConf)()) };
    for (const binary of ['iptables', 'ip6tables'] as const) {
      await run(`${binary}-restore`, ['-w', '--noflush'], egressChainRestore(binary, policy));
    }
    for (const { binary, chain, rule } of FIREWALL_RULES) {
      // -w waits for the xtables lock that dockerd also takes.
      const present = await run(binary, ['-w', '-C', chain, ...rule]).then(
        () => true,
        () => false,
      );
      if (!present) await run(binary, ['-w', '-I', chain, '1', ...rule]);
    }
    await installAllowlistDispatch(run);
    return null;
  } catch (error) {
    return commandFailure(error);
  }
}

const SYSTEMD_RESOLVED_STUB = '127.0.0.53';

async function readHostResolvConf(): Promise<string> {
  const hosts = await readFile('/etc/resolv.conf', 'utf8').catch(() => '');
  const servers = parseNameservers(hosts);
  if (servers.length > 0 && servers.every((server) => server === SYSTEMD_RESOLVED_STUB)) {
    return readFile('/run/systemd/resolve/resolv.conf', 'utf8').catch(() => hosts);
  }
  return hosts;
}

function commandFailure(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const { code, stderr, message } = error as { code?: unknown; stderr?: unknown; message?: unknown };
  if (code === 'ENOENT') return 'iptables is not installed';
  const said = typeof stderr === 'string' && stderr.trim() ? stderr.trim().split('\n')[0] : String(message);
  return `iptables failed: ${said}`;
}
