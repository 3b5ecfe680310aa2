import { describe, expect, it } from 'vitest';
import { decideEgress, egressRulesOf, formatEgressEntry, hostPortsOf, parseEgressEntry } from '../../../src/sandbox-server/net/egress-policy.js';

const rules = (allow: string[], deny: string[] = []) => egressRulesOf({ allow, deny });

describe('egress policy entries', () => {
  it.each([
    ['github.com', 'github.com'],
    ['*.PyPI.org', '*.pypi.org'],
    ['api.example.com:443', 'api.example.com:443'],
    ['10.1.2.3', '10.1.2.3'],
    ['10.1.2.3/16', '10.1.0.0/16'],
    ['192.0.2.7:5432', '192.0.2.7:5432'],
    ['host.sandbox.internal:11434', 'host.sandbox.internal:11434'],
    ['example.com.', 'example.com'],
  ])('reads %s as %s', (entry, normalized) => {
    const parsed = parseEgressEntry(entry);
    if (typeof parsed === 'string') throw new Error(parsed);
    expect(formatEgressEntry(parsed)).toBe(normalized);
  });

  it.each(['', 'localhost', '*', '*.', 'foo.*.com', 'http://github.com', 'github.com/path', 'a..b', '10.0.0.0/33', '300.1.1.1', 'example.com:0', 'example.com:70000', '1.2.3', 'fd00::/8', 'host.sandbox.internal', '*.host.sandbox.internal:1'])(
    'refuses %j',
    (entry) => expect(typeof parseEgressEntry(entry)).toBe('string'),
  );
});

describe('egress decisions', () => {
  it('allows a name, any name below a wildcard but not the wildcard\'s own name, and nothing else', () => {
    const policy = rules(['github.com', '*.pypi.org']);
    expect(decideEgress(policy, 'github.com', 443).allowed).toBe(true);
    expect(decideEgress(policy, 'GitHub.com.', 443).allowed).toBe(true);
    expect(decideEgress(policy, 'files.pypi.org', 443).allowed).toBe(true);
    expect(decideEgress(policy, 'a.b.pypi.org', 80).allowed).toBe(true);
    expect(decideEgress(policy, 'pypi.org', 443).allowed).toBe(false);
    expect(decideEgress(policy, 'api.github.com', 443).allowed).toBe(false);
    expect(decideEgress(policy, 'evilpypi.org', 443).allowed).toBe(false);
  });

  it('lets a deny entry win over an allow entry, and a port narrow either', () => {
    const policy = rules(['*.example.com', 'api.example.org:443', '10.0.0.0/8'], ['secret.example.com', '*.example.com:22', '10.9.0.0/16']);
    expect(decideEgress(policy, 'www.example.com', 443).allowed).toBe(true);
    expect(decideEgress(policy, 'secret.example.com', 443)).toMatchObject({ allowed: false, entry: { kind: 'name', name: 'secret.example.com' } });
    expect(decideEgress(policy, 'www.example.com', 22).allowed).toBe(false);
    // A name is answered by the resolver when any of its ports is open.
    expect(decideEgress(policy, 'www.example.com', null).allowed).toBe(true);
    expect(decideEgress(policy, 'secret.example.com', null).allowed).toBe(false);
    expect(decideEgress(policy, 'api.example.org', 443).allowed).toBe(true);
    expect(decideEgress(policy, 'api.example.org', 80).allowed).toBe(false);
    expect(decideEgress(policy, '10.1.2.3', 5432).allowed).toBe(true);
    expect(decideEgress(policy, '10.9.2.3', 5432).allowed).toBe(false);
    expect(decideEgress(policy, '11.0.0.1', 80)).toEqual({ allowed: false, entry: null });
  });

  it('opens the host one allowed port at a time', () => {
    expect(hostPortsOf(rules(['host.sandbox.internal:11434', 'host.sandbox.internal:4000', 'github.com'], ['host.sandbox.internal:4000']))).toEqual([11434]);
  });
});
