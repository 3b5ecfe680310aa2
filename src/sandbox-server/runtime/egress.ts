import { isIP } from 'node:net';

/**
 * What an `internet` sandbox may not reach beyond this machine: the address ranges that are never
 * the public internet but often hold something worth protecting (a cloud's metadata service at
 * 169.254.169.254, the LAN, a VPC's other machines, a carrier's or a VPN's private addresses). The
 * host's own addresses and other sandboxes are kept away by firewall.ts's other rules.
 */
export const PRIVATE_RANGES = {
  iptables: [
    '10.0.0.0/8',
    '172.16.0.0/12',
    '192.168.0.0/16',
    // Link-local: cloud metadata services, and the host-only addresses of some VPNs.
    '169.254.0.0/16',
    // Shared address space (RFC 6598): carrier-grade NAT, Tailscale.
    '100.64.0.0/10',
  ],
  ip6tables: ['fe80::/10', 'fc00::/7'],
} as const;

export type IptablesBinary = keyof typeof PRIVATE_RANGES;

/** The chain, in each family's filter table, that every packet an `internet` sandbox sends goes through. */
export const EGRESS_CHAIN = 'SANDBOX-SERVER-EGRESS';

export interface EgressPolicy {
  /** SANDBOX_INTERNET_ALLOW: blocks reopened, IPv4 or IPv6 CIDRs. */
  allow: readonly string[];
  /**
   * The host's DNS servers: Docker's resolver inside each sandbox forwards to them from the sandbox's
   * own network, so port 53 of each stays open even when it sits in a private range.
   */
  nameservers: readonly string[];
}

/**
 * The chain's rules for one family, as `iptables-restore --noflush` input: naming the chain empties
 * it and the whole table commits at once, so a changed policy replaces the old one with no moment
 * in between where neither holds.
 */
export function egressChainRestore(binary: IptablesBinary, policy: EgressPolicy): string {
  const family = binary === 'iptables' ? 4 : 6;
  const rule = (...args: string[]) => `-A ${EGRESS_CHAIN} ${args.join(' ')}`;
  const comment = (text: string) => ['-m', 'comment', '--comment', `"sandbox-server: ${text}"`];
  const lines = [
    '*filter',
    `:${EGRESS_CHAIN} - [0:0]`,
    // Replies to connections made to the sandbox (its published ports reached from the LAN) pass.
    rule('-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', '-j', 'RETURN'),
    ...policy.nameservers
      .filter((address) => isIP(address) === family)
      .flatMap((address) =>
        ['udp', 'tcp'].map((protocol) => rule('-d', address, '-p', protocol, '--dport', '53', ...comment('the host DNS server'), '-j', 'RETURN')),
      ),
    ...policy.allow
      .filter((cidr) => isIP(cidr.split('/')[0] ?? '') === family)
      .map((cidr) => rule('-d', cidr, ...comment('reopened by SANDBOX_INTERNET_ALLOW'), '-j', 'RETURN')),
    ...PRIVATE_RANGES[binary].map((cidr) =>
      rule('-d', cidr, ...comment('internet means the internet'), '-j', 'REJECT', '--reject-with', family === 4 ? 'icmp-admin-prohibited' : 'icmp6-adm-prohibited'),
    ),
    'COMMIT',
    '',
  ];
  return lines.join('\n');
}

/**
 * The name servers a resolv.conf lists. When the only one is systemd-resolved's stub (127.0.0.53),
 * Docker, like every other program, reads the real ones from resolved's own file: `fallback` reads it.
 */
export function parseNameservers(resolvConf: string): string[] {
  return resolvConf
    .split('\n')
    .map((line) => /^\s*nameserver\s+(\S+)/.exec(line)?.[1])
    .filter((address): address is string => address !== undefined && isIP(address.split('%')[0] ?? '') !== 0)
    .map((address) => address.split('%')[0] as string);
}

/** A CIDR block ("10.1.2.0/24", "fd00::/8") or a single address; undefined when it is neither. */
export function parseAllowEntry(entry: string): string | undefined {
  const [address = '', prefix] = entry.split('/');
  const family = isIP(address);
  if (family === 0) return undefined;
  const max = family === 4 ? 32 : 128;
  if (prefix === undefined) return `${address}/${max}`;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return undefined;
  return `${address}/${Number(prefix)}`;
}
