import { type EgressEntry, type EgressRules, formatEgressEntry, PROXY_NAME } from '../net/egress-policy.js';
import { ALLOWLIST_DISPATCH } from './allowlist-firewall.js';
import type { RunCommand } from './run-command.js';

/**
 * One `allowlist` sandbox's packet rules, in three chains named after its bridge (so a chain whose
 * bridge is gone is known to be stale, whoever wrote it):
 * - SBXN-<key> (nat): its DNS (any server, port 53) to the control plane's resolver; the proxy's
 *   well-known port and the host ports its policy opens, asked of its gateway, to the control plane's
 *   listeners; and ports 80 and 443 of any address but an allowed block to the transparent door;
 * - SBXH-<key> (INPUT): only those listeners, and only from its own address;
 * - SBXE-<key> (FORWARD): replies, then its deny blocks, then its allow blocks; everything else is
 *   rejected and counted (the `egress denied` comment marks the rules whose counters say so).
 * A change rewrites all three in one iptables-restore (each table commits at once, so no packet
 * sees half of a policy).
 */

/** The proxy's port as a sandbox sees it (HTTP_PROXY=http://proxy.sandbox.internal:3128). */
export const PROXY_PORT_IN_SANDBOX = 3128;
export const DENIED_COMMENT = 'sandbox-server: egress denied';

/**
 * The proxy settings an `allowlist` sandbox's container gets, in both spellings tools read. The
 * name and port are the same for every sandbox (its resolver and packet rules lead them to the
 * control plane), so a container never needs changing when the control plane's ports do.
 */
export function egressProxyEnv(): Record<string, string> {
  const proxy = `http://${PROXY_NAME}:${PROXY_PORT_IN_SANDBOX}`;
  const local = 'localhost,127.0.0.1,::1';
  return { HTTP_PROXY: proxy, HTTPS_PROXY: proxy, http_proxy: proxy, https_proxy: proxy, NO_PROXY: local, no_proxy: local };
}

/** Where the control plane's egress listeners are, on every sandbox network's gateway. */
export interface EgressListeners {
  proxy: number;
  transparent: number;
  dns: number;
  /** Host port -> the listener that relays a sandbox to it (ports the policies open). */
  hostRelays: ReadonlyMap<number, number>;
}

export interface AllowlistSandbox {
  bridge: string;
  address: string;
  gateway: string;
  rules: EgressRules;
  /** The host ports its policy opens (80 and 443 go through the proxy's doors instead). */
  hostPorts: readonly number[];
}

export function chainsOf(bridge: string): { forward: string; host: string; redirect: string } {
  const key = bridge.slice(4);
  return { forward: `SBXE-${key}`, host: `SBXH-${key}`, redirect: `SBXN-${key}` };
}

/** The iptables-restore --noflush input writing the sandbox's chains (jumps to them are separate). */
export function allowlistRestore(sandbox: AllowlistSandbox, listeners: EgressListeners): string {
  const { address, gateway } = sandbox;
  const chains = chainsOf(sandbox.bridge);
  const comment = (text: string) => ['-m', 'comment', '--comment', `"${text}"`];
  const rule = (chain: string, ...args: string[]) => `-A ${chain} ${args.join(' ')}`;
  const blocks = (entries: readonly EgressEntry[]) => entries.filter((entry): entry is Extract<EgressEntry, { kind: 'cidr' }> => entry.kind === 'cidr');
  /** Match arguments of a block entry: its addresses, and its port over TCP and UDP when it has one. */
  const matches = (entry: Extract<EgressEntry, { kind: 'cidr' }>) =>
    entry.port === null ? [['-d', entry.cidr]] : ['tcp', 'udp'].map((protocol) => ['-d', entry.cidr, '-p', protocol, '--dport', String(entry.port)]);
  const relayed = sandbox.hostPorts.flatMap((port) => {
    const relay = listeners.hostRelays.get(port);
    return relay === undefined || port === 80 || port === 443 ? [] : [[port, relay] as const];
  });
  const to = (port: number) => ['-j', 'DNAT', '--to-destination', `${gateway}:${port}`];
  const filter = [
    '*filter',
    `:${chains.forward} - [0:0]`,
    `:${chains.host} - [0:0]`,
    rule(chains.forward, '-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', '-j', 'RETURN'),
    rule(chains.forward, '!', '-s', address, ...comment('sandbox-server: not its address'), '-j', 'DROP'),
    ...blocks(sandbox.rules.deny).flatMap((entry) =>
      matches(entry).map((match) => rule(chains.forward, ...match, ...comment(DENIED_COMMENT), '-j', 'REJECT', '--reject-with', 'icmp-admin-prohibited')),
    ),
    ...blocks(sandbox.rules.allow).flatMap((entry) =>
      matches(entry).map((match) => rule(chains.forward, ...match, ...comment(`sandbox-server: allow ${formatEgressEntry(entry)}`), '-j', 'RETURN')),
    ),
    rule(chains.forward, '-p', 'tcp', ...comment(DENIED_COMMENT), '-j', 'REJECT', '--reject-with', 'tcp-reset'),
    rule(chains.forward, ...comment(DENIED_COMMENT), '-j', 'REJECT', '--reject-with', 'icmp-admin-prohibited'),
    ...[listeners.proxy, listeners.transparent, listeners.dns, ...relayed.map(([, relay]) => relay)].map((port) =>
      rule(chains.host, '-s', address, '-d', gateway, '-p', 'tcp', '--dport', String(port), '-j', 'ACCEPT'),
    ),
    rule(chains.host, '-s', address, '-d', gateway, '-p', 'udp', '--dport', String(listeners.dns), '-j', 'ACCEPT'),
    'COMMIT',
  ];
  const nat = [
    '*nat',
    `:${chains.redirect} - [0:0]`,
    rule(chains.redirect, '!', '-s', address, '-j', 'RETURN'),
    rule(chains.redirect, '-p', 'udp', '--dport', '53', ...to(listeners.dns)),
    rule(chains.redirect, '-p', 'tcp', '--dport', '53', ...to(listeners.dns)),
    rule(chains.redirect, '-d', gateway, '-p', 'tcp', '--dport', String(PROXY_PORT_IN_SANDBOX), ...to(listeners.proxy)),
    ...relayed.map(([port, relay]) => rule(chains.redirect, '-d', gateway, '-p', 'tcp', '--dport', String(port), ...to(relay))),
    ...blocks(sandbox.rules.allow).map((entry) => rule(chains.redirect, '-d', entry.cidr, '-j', 'RETURN')),
    rule(chains.redirect, '-p', 'tcp', '-m', 'multiport', '--dports', '80,443', ...to(listeners.transparent)),
    'COMMIT',
  ];
  return [...filter, ...nat, ''].join('\n');
}

/** The dispatch rules that send the sandbox's packets to its chains: [table, dispatch chain, rule]. */
function jumpsOf(bridge: string): [string, string, string[]][] {
  const chains = chainsOf(bridge);
  return [
    ['filter', ALLOWLIST_DISPATCH.forward, ['-i', bridge, '-g', chains.forward]],
    ['filter', ALLOWLIST_DISPATCH.host, ['-i', bridge, '-g', chains.host]],
    ['nat', ALLOWLIST_DISPATCH.redirect, ['-i', bridge, '-g', chains.redirect]],
  ];
}

/** Writes the sandbox's chains, then the jumps to them where missing. */
export async function applyAllowlistRules(run: RunCommand, sandbox: AllowlistSandbox, listeners: EgressListeners): Promise<void> {
  await run('iptables-restore', ['-w', '--noflush'], allowlistRestore(sandbox, listeners));
  for (const [table, chain, jump] of jumpsOf(sandbox.bridge)) {
    const present = await run('iptables', ['-w', '-t', table, '-C', chain, ...jump]).then(
      () => true,
      () => false,
    );
    if (!present) await run('iptables', ['-w', '-t', table, '-I', chain, '1', ...jump]);
  }
}

/** Removes the jumps to the chains of `bridge`, then the chains; what is already gone is skipped. */
export async function removeAllowlistRules(run: RunCommand, bridge: string): Promise<void> {
  const quietly = (args: string[]) => run('iptables', ['-w', ...args]).catch(() => undefined);
  for (const [table, chain, jump] of jumpsOf(bridge)) await quietly(['-t', table, '-D', chain, ...jump]);
  const chains = chainsOf(bridge);
  for (const [table, chain] of [['filter', chains.forward], ['filter', chains.host], ['nat', chains.redirect]] as const) {
    await quietly(['-t', table, '-F', chain]);
    await quietly(['-t', table, '-X', chain]);
  }
}

/**
 * From `iptables-save -c` output: per sandbox chain key's bridge, the packets its denying rules
 * counted; and the bridges that have chains at all (to find stale ones).
 */
export function readDeniedCounters(save: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of save.split('\n')) {
    const chain = /^:SBX[EHN]-([0-9a-f]+) /.exec(line);
    if (chain) counts.set(`sbxa${chain[1]}`, counts.get(`sbxa${chain[1]}`) ?? 0);
    const counted = /^\[(\d+):\d+\] -A SBXE-([0-9a-f]+) .*sandbox-server: egress denied/.exec(line);
    if (counted) counts.set(`sbxa${counted[2]}`, (counts.get(`sbxa${counted[2]}`) ?? 0) + Number(counted[1]));
  }
  return counts;
}
