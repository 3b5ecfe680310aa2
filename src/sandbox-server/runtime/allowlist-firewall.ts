import { ALLOWLIST_SANDBOX_BRIDGE } from './sandbox-network.js';
import type { RunCommand } from './run-command.js';

/**
 * The machine-wide half of `allowlist` sandboxes' packet rules: where each table sends their
 * packets. Each sandbox's own chains (allowlist-rules.ts) are reached from three dispatch chains,
 * one rule per sandbox (`-i BRIDGE -g CHAIN`) added and removed by the control plane that runs it;
 * the dispatch chains are never flushed, as several control planes on one machine share them.
 *
 * - FORWARD (DOCKER-USER): a packet of a sandbox that has no chain yet (its container started a moment
 *   before its rules) meets the dispatch chain's last rule and is rejected: deny by default.
 * - INPUT: nothing reaches the host but what a sandbox's chain accepts (the egress proxy, the
 *   resolver and the host ports its policy opens); the rest falls through to firewall.ts's drop.
 * - nat PREROUTING: DNS, the proxy's well-known port, 80 and 443 are redirected to the control plane.
 */
export const ALLOWLIST_DISPATCH = {
  forward: 'SBX-ALLOWLIST-FWD',
  host: 'SBX-ALLOWLIST-HOST',
  redirect: 'SBX-ALLOWLIST-NAT',
} as const;

const COMMENT = ['-m', 'comment', '--comment'];

interface DispatchChain {
  table: 'filter' | 'nat';
  chain: string;
  /** Where the chain is reached from, and the rule there (inserted at the top). */
  parent: string;
  /** The chain's last rule, for packets of a sandbox with no rules of its own. */
  last?: string[];
}

const DISPATCH_CHAINS: readonly DispatchChain[] = [
  {
    table: 'filter',
    chain: ALLOWLIST_DISPATCH.forward,
    parent: 'DOCKER-USER',
    last: [...COMMENT, 'sandbox-server: allowlist denies by default', '-j', 'REJECT', '--reject-with', 'icmp-admin-prohibited'],
  },
  { table: 'filter', chain: ALLOWLIST_DISPATCH.host, parent: 'INPUT' },
  { table: 'nat', chain: ALLOWLIST_DISPATCH.redirect, parent: 'PREROUTING' },
];

/**
 * Creates the dispatch chains and their jumps where missing (idempotent, never flushing what other
 * control planes added). Rejects with the failing command's error.
 */
export async function installAllowlistDispatch(run: RunCommand): Promise<void> {
  const succeeds = (args: string[]) =>
    run('iptables', ['-w', ...args]).then(
      () => true,
      () => false,
    );
  for (const { table, chain, parent, last } of DISPATCH_CHAINS) {
    if (!(await succeeds(['-t', table, '-S', chain]))) await run('iptables', ['-w', '-t', table, '-N', chain]);
    if (last && !(await succeeds(['-t', table, '-C', chain, ...last]))) await run('iptables', ['-w', '-t', table, '-A', chain, ...last]);
    const jump = ['-i', ALLOWLIST_SANDBOX_BRIDGE, ...COMMENT, 'sandbox-server: allowlist sandboxes', '-j', chain];
    if (!(await succeeds(['-t', table, '-C', parent, ...jump]))) await run('iptables', ['-w', '-t', table, '-I', parent, '1', ...jump]);
  }
}
