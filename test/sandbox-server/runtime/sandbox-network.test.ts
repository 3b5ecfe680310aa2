import { describe, expect, it } from 'vitest';
import {
  bridgeNameFor,
  formatCidr,
  overlaps,
  parseCidr,
  parseRoutes,
  subnetCandidates,
} from '../../../src/sandbox-server/runtime/sandbox-network.js';

describe('sandbox networks on the host', () => {
  it('names bridges by what they reach, within the 15 characters Linux allows, the same for the same network', () => {
    const internet = bridgeNameFor('sandbox-server-net-a', 'internet');
    expect(internet).toMatch(/^sbxi[0-9a-f]{11}$/);
    expect(bridgeNameFor('sandbox-server-net-a', 'none')).toMatch(/^sbxn[0-9a-f]{11}$/);
    expect(bridgeNameFor('sandbox-server-net-a', 'internet')).toBe(internet);
    expect(bridgeNameFor('sandbox-server-net-b', 'internet')).not.toBe(internet);
  });

  it('reads and writes IPv4 blocks, normalizing the base, and refuses what is not one', () => {
    expect(formatCidr(parseCidr('10.213.7.9/16')!)).toBe('10.213.0.0/16');
    expect(formatCidr(parseCidr('192.168.1.250/29')!)).toBe('192.168.1.248/29');
    for (const bad of ['10.213.0.0', '10.213.0.256/16', '10.213.0.0/33', 'fd00::/64', '']) expect(parseCidr(bad), bad).toBeUndefined();
  });

  it('tells overlapping blocks apart from neighbours', () => {
    const block = (cidr: string) => parseCidr(cidr)!;
    expect(overlaps(block('10.213.0.0/16'), block('10.213.4.8/29'))).toBe(true);
    expect(overlaps(block('10.213.4.8/29'), block('10.213.0.0/16'))).toBe(true);
    expect(overlaps(block('10.213.4.8/29'), block('10.213.4.16/29'))).toBe(false);
    expect(overlaps(block('10.210.1.0/24'), block('10.213.0.0/16'))).toBe(false);
  });

  it('walks every /29 of the pool once, from a start that depends on the sandbox', () => {
    const pool = parseCidr('10.213.0.0/24')!;
    const a = [...subnetCandidates('sandbox-a', pool)].map(formatCidr);
    const b = [...subnetCandidates('sandbox-b', pool)].map(formatCidr);
    expect(a).toHaveLength(32);
    expect(new Set(a).size).toBe(32);
    expect(new Set(a)).toEqual(new Set(b));
    expect(a[0]).not.toBe(b[0]);
    expect(a.every((cidr) => /^10\.213\.0\.\d+\/29$/.test(cidr) && overlaps(parseCidr(cidr)!, pool))).toBe(true);
  });

  it("reads the host's routed blocks from /proc/net/route, skipping the default route", () => {
    const table = [
      'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT',
      'eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0',
      'docker-e1\t0001D20A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0',
      'sbxi0123456789a\t08D50D0A\t00000000\t0001\t0\t0\t0\tF8FFFFFF\t0\t0\t0',
      '',
    ].join('\n');
    expect(parseRoutes(table).map(formatCidr)).toEqual(['10.210.1.0/24', '10.13.213.8/29']);
  });
});
