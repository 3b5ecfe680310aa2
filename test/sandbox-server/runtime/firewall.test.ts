import { describe, expect, it } from 'vitest';
import { EGRESS_CHAIN, egressChainRestore, parseAllowEntry, parseNameservers } from '../../../src/sandbox-server/runtime/egress.js';
import { FIREWALL_RULES, installFirewall, type RunCommand } from '../../../src/sandbox-server/runtime/firewall.js';

/** iptables as a set of rules: -C answers whether one is there, -I adds it; restores are recorded. */
function fakeIptables(present: string[][] = []) {
  const rules = new Set(present.map((r) => r.join(' ')));
  const inserted: string[] = [];
  const restored: { file: string; input: string }[] = [];
  const run: RunCommand = async (file, args, input) => {
    if (file.endsWith('-restore')) {
      expect(args).toEqual(['-w', '--noflush']);
      restored.push({ file, input: input ?? '' });
      return;
    }
    const [wait, verb, chain, ...rest] = args;
    expect(wait).toBe('-w');
    const key = [file, chain, ...(verb === '-I' ? rest.slice(1) : rest)].join(' ');
    if (verb === '-C' && !rules.has(key)) throw Object.assign(new Error('exit 1'), { code: 1, stderr: 'Bad rule' });
    if (verb === '-I') {
      rules.add(key);
      inserted.push(key);
    }
  };
  return { run, inserted, restored };
}

const RESOLV = async () => 'search lan\nnameserver 10.255.255.53\nnameserver fd00::53\n';

describe('the host firewall for sandbox networks', () => {
  it('inserts each missing rule at the top of its chain, once: a second install changes nothing', async () => {
    const iptables = fakeIptables();
    expect(await installFirewall({ run: iptables.run, readResolvConf: RESOLV })).toBeNull();
    expect(iptables.inserted).toHaveLength(FIREWALL_RULES.length);
    expect(await installFirewall({ run: iptables.run, readResolvConf: RESOLV })).toBeNull();
    expect(iptables.inserted).toHaveLength(FIREWALL_RULES.length);
  });

  it('keeps sandbox bridges from the host and each other, a none network from everything, and sends internet ones through the egress chain', () => {
    const lines = FIREWALL_RULES.map((r) => `${r.binary} ${r.chain} ${r.rule.join(' ')}`);
    expect(lines).toContainEqual(expect.stringMatching(/^iptables INPUT -i sbx\+ .*! --ctstate ESTABLISHED,RELATED .*-j DROP$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ip6tables INPUT -i sbx\+ .*-j DROP$/));
    expect(lines).toContainEqual(expect.stringMatching(/^iptables DOCKER-USER -i sbx\+ -o sbx\+ .*-j DROP$/));
    expect(lines).toContainEqual(expect.stringMatching(/^iptables DOCKER-USER -i sbxn\+ .*-j DROP$/));
    expect(lines).toContainEqual(`iptables DOCKER-USER -i sbxi+ -m comment --comment sandbox-server: internet means the internet -j ${EGRESS_CHAIN}`);
    expect(lines).toContainEqual(`ip6tables FORWARD -i sbxi+ -m comment --comment sandbox-server: internet means the internet -j ${EGRESS_CHAIN}`);
  });

  it('rewrites the egress chain of both families at every install, before the jumps to it, with the allowed blocks and the DNS servers open', async () => {
    const iptables = fakeIptables();
    expect(await installFirewall({ run: iptables.run, allow: ['10.7.0.0/16', 'fd12::/16'], readResolvConf: RESOLV })).toBeNull();
    expect(iptables.restored.map((r) => r.file)).toEqual(['iptables-restore', 'ip6tables-restore']);
    const [v4 = [], v6 = []] = iptables.restored.map((r) => r.input.split('\n'));
    expect(v4).toEqual([
      '*filter',
      `:${EGRESS_CHAIN} - [0:0]`,
      `-A ${EGRESS_CHAIN} -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN`,
      `-A ${EGRESS_CHAIN} -d 10.255.255.53 -p udp --dport 53 -m comment --comment "sandbox-server: the host DNS server" -j RETURN`,
      `-A ${EGRESS_CHAIN} -d 10.255.255.53 -p tcp --dport 53 -m comment --comment "sandbox-server: the host DNS server" -j RETURN`,
      `-A ${EGRESS_CHAIN} -d 10.7.0.0/16 -m comment --comment "sandbox-server: reopened by SANDBOX_INTERNET_ALLOW" -j RETURN`,
      ...['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10'].map(
        (cidr) => `-A ${EGRESS_CHAIN} -d ${cidr} -m comment --comment "sandbox-server: internet means the internet" -j REJECT --reject-with icmp-admin-prohibited`,
      ),
      'COMMIT',
      '',
    ]);
    expect(v6).toContain(`-A ${EGRESS_CHAIN} -d fd00::53 -p udp --dport 53 -m comment --comment "sandbox-server: the host DNS server" -j RETURN`);
    expect(v6).toContain(`-A ${EGRESS_CHAIN} -d fd12::/16 -m comment --comment "sandbox-server: reopened by SANDBOX_INTERNET_ALLOW" -j RETURN`);
    expect(v6.filter((line) => line.includes('REJECT'))).toEqual(
      ['fe80::/10', 'fc00::/7'].map(
        (cidr) => `-A ${EGRESS_CHAIN} -d ${cidr} -m comment --comment "sandbox-server: internet means the internet" -j REJECT --reject-with icmp6-adm-prohibited`,
      ),
    );
    // Without name servers or allowed blocks, only replies pass before the refusals.
    expect(egressChainRestore('iptables', { allow: [], nameservers: [] }).match(/-j RETURN/g)).toHaveLength(1);
  });

  it('reads name servers and allowed blocks', () => {
    expect(parseNameservers('# x\nnameserver 1.1.1.1\nnameserver  fe80::1%eth0\nnameserver bogus\noptions ndots:0\n')).toEqual(['1.1.1.1', 'fe80::1']);
    expect(['10.0.0.0/8', '10.1.2.3', 'fd00::/8', '10.0.0.0/33', 'example.com', '10.0.0.0/x'].map(parseAllowEntry)).toEqual([
      '10.0.0.0/8',
      '10.1.2.3/32',
      'fd00::/8',
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('says why when it cannot: no iptables, or not allowed', async () => {
    const missing: RunCommand = async () => {
      throw Object.assign(new Error('spawn iptables ENOENT'), { code: 'ENOENT' });
    };
    expect(await installFirewall({ run: missing, readResolvConf: RESOLV })).toBe('iptables is not installed');
    const denied: RunCommand = async () => {
      throw Object.assign(new Error('exit 4'), { code: 4, stderr: 'iptables v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied (you must be root)\n' });
    };
    expect(await installFirewall({ run: denied, readResolvConf: RESOLV })).toBe('iptables failed: iptables v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied (you must be root)');
  });
});
