import { describe, expect, it } from 'vitest';
import { egressRulesOf } from '../../../src/sandbox-server/net/egress-policy.js';
import { allowlistRestore, chainsOf, readDeniedCounters } from '../../../src/sandbox-server/runtime/allowlist-rules.js';

const LISTENERS = { proxy: 40001, transparent: 40002, dns: 40003, hostRelays: new Map([[11434, 40004], [443, 40005]]) };
const SANDBOX = {
  bridge: 'sbxa0123456789a',
  address: '10.213.4.2',
  gateway: '10.213.4.1',
  rules: egressRulesOf({ allow: ['github.com', '10.9.0.0/16', '192.0.2.7:5432'], deny: ['10.9.9.0/24'] }),
  hostPorts: [443, 11434],
};

describe("an allowlist sandbox's packet rules", () => {
  const lines = allowlistRestore(SANDBOX, LISTENERS).split('\n');
  const { forward, host, redirect } = chainsOf(SANDBOX.bridge);

  it('names its chains after its bridge, and rewrites each in one restore per table', () => {
    expect([forward, host, redirect]).toEqual(['SBXE-0123456789a', 'SBXH-0123456789a', 'SBXN-0123456789a']);
    expect(lines.filter((line) => /^(\*|:|COMMIT)/.test(line))).toEqual(['*filter', `:${forward} - [0:0]`, `:${host} - [0:0]`, 'COMMIT', '*nat', `:${redirect} - [0:0]`, 'COMMIT']);
  });

  it('forwards replies, then refuses its deny blocks, lets its allow blocks through, and rejects the rest, counted', () => {
    const chain = lines.filter((line) => line.startsWith(`-A ${forward} `)).map((line) => line.slice(`-A ${forward} `.length));
    expect(chain).toEqual([
      '-m conntrack --ctstate ESTABLISHED,RELATED -j RETURN',
      '! -s 10.213.4.2 -m comment --comment "sandbox-server: not its address" -j DROP',
      '-d 10.9.9.0/24 -m comment --comment "sandbox-server: egress denied" -j REJECT --reject-with icmp-admin-prohibited',
      '-d 10.9.0.0/16 -m comment --comment "sandbox-server: allow 10.9.0.0/16" -j RETURN',
      '-d 192.0.2.7/32 -p tcp --dport 5432 -m comment --comment "sandbox-server: allow 192.0.2.7:5432" -j RETURN',
      '-d 192.0.2.7/32 -p udp --dport 5432 -m comment --comment "sandbox-server: allow 192.0.2.7:5432" -j RETURN',
      '-p tcp -m comment --comment "sandbox-server: egress denied" -j REJECT --reject-with tcp-reset',
      '-m comment --comment "sandbox-server: egress denied" -j REJECT --reject-with icmp-admin-prohibited',
    ]);
  });

  it('opens only the control plane\'s listeners on its gateway, from its own address', () => {
    const chain = lines.filter((line) => line.startsWith(`-A ${host} `));
    expect(chain).toEqual([
      ...[40001, 40002, 40003, 40004].map((port) => `-A ${host} -s 10.213.4.2 -d 10.213.4.1 -p tcp --dport ${port} -j ACCEPT`),
      `-A ${host} -s 10.213.4.2 -d 10.213.4.1 -p udp --dport 40003 -j ACCEPT`,
    ]);
  });

  it('sends DNS, the proxy port and allowed host ports to the control plane, and 80/443 to the transparent door unless an allowed block', () => {
    const chain = lines.filter((line) => line.startsWith(`-A ${redirect} `)).map((line) => line.slice(`-A ${redirect} `.length));
    expect(chain).toEqual([
      '! -s 10.213.4.2 -j RETURN',
      '-p udp --dport 53 -j DNAT --to-destination 10.213.4.1:40003',
      '-p tcp --dport 53 -j DNAT --to-destination 10.213.4.1:40003',
      '-d 10.213.4.1 -p tcp --dport 3128 -j DNAT --to-destination 10.213.4.1:40001',
      // 443 of the host is reached through the proxy's doors (by name), not a relay.
      '-d 10.213.4.1 -p tcp --dport 11434 -j DNAT --to-destination 10.213.4.1:40004',
      '-d 10.9.0.0/16 -j RETURN',
      '-d 192.0.2.7/32 -j RETURN',
      '-p tcp -m multiport --dports 80,443 -j DNAT --to-destination 10.213.4.1:40002',
    ]);
  });

  it('reads what each bridge\'s denying rules counted from iptables-save -c', () => {
    const saved = [
      ':SBXE-0123456789a - [0:0]',
      ':SBXE-00000000000 - [0:0]',
      '[5:300] -A SBXE-0123456789a -d 10.9.9.0/24 -m comment --comment "sandbox-server: egress denied" -j REJECT',
      '[9:900] -A SBXE-0123456789a -d 10.9.0.0/16 -m comment --comment "sandbox-server: allow 10.9.0.0/16" -j RETURN',
      '[2:120] -A SBXE-0123456789a -p tcp -m comment --comment "sandbox-server: egress denied" -j REJECT --reject-with tcp-reset',
    ].join('\n');
    expect(readDeniedCounters(saved)).toEqual(new Map([['sbxa0123456789a', 7], ['sbxa00000000000', 0]]));
  });
});
