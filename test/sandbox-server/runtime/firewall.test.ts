import { describe, expect, it } from 'vitest';
import { FIREWALL_RULES, installFirewall, type RunCommand } from '../../../src/sandbox-server/runtime/firewall.js';

/** iptables as a set of rules: -C answers whether one is there, -I adds it. */
function fakeIptables(present: string[][] = []) {
  const rules = new Set(present.map((r) => r.join(' ')));
  const inserted: string[] = [];
  const run: RunCommand = async (file, args) => {
    const [wait, verb, chain, ...rest] = args;
    expect(wait).toBe('-w');
    const key = [file, chain, ...(verb === '-I' ? rest.slice(1) : rest)].join(' ');
    if (verb === '-C' && !rules.has(key)) throw Object.assign(new Error('exit 1'), { code: 1, stderr: 'Bad rule' });
    if (verb === '-I') {
      rules.add(key);
      inserted.push(key);
    }
  };
  return { run, inserted };
}

describe('the host firewall for sandbox networks', () => {
  it('inserts each missing rule at the top of its chain, once: a second install changes nothing', async () => {
    const iptables = fakeIptables();
    expect(await installFirewall(iptables.run)).toBeNull();
    expect(iptables.inserted).toHaveLength(FIREWALL_RULES.length);
    expect(await installFirewall(iptables.run)).toBeNull();
    expect(iptables.inserted).toHaveLength(FIREWALL_RULES.length);
  });

  it('keeps sandbox bridges from the host and each other, and a none network from everything', () => {
    const lines = FIREWALL_RULES.map((r) => `${r.binary} ${r.chain} ${r.rule.join(' ')}`);
    expect(lines).toContainEqual(expect.stringMatching(/^iptables INPUT -i sbx\+ .*! --ctstate ESTABLISHED,RELATED .*-j DROP$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ip6tables INPUT -i sbx\+ .*-j DROP$/));
    expect(lines).toContainEqual(expect.stringMatching(/^iptables DOCKER-USER -i sbx\+ -o sbx\+ .*-j DROP$/));
    expect(lines).toContainEqual(expect.stringMatching(/^iptables DOCKER-USER -i sbxn\+ .*-j DROP$/));
  });

  it('says why when it cannot: no iptables, or not allowed', async () => {
    const missing: RunCommand = async () => {
      throw Object.assign(new Error('spawn iptables ENOENT'), { code: 'ENOENT' });
    };
    expect(await installFirewall(missing)).toBe('iptables is not installed');
    const denied: RunCommand = async () => {
      throw Object.assign(new Error('exit 4'), { code: 4, stderr: 'iptables v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied (you must be root)\n' });
    };
    expect(await installFirewall(denied)).toBe('iptables failed: iptables v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied (you must be root)');
  });
});
