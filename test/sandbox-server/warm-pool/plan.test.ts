import { describe, expect, it } from 'vitest';
import { planWarmPools, type WarmPoolMember } from '../../../src/sandbox-server/warm-pool/plan.js';

const member = (id: string, overrides: Partial<WarmPoolMember> = {}): WarmPoolMember => ({
  id,
  specId: 'a',
  fingerprint: 'fa',
  status: 'RUNNING',
  displaced: false,
  ...overrides,
});

describe('planWarmPools', () => {
  const wants = [
    { specId: 'a', size: 2, fingerprint: 'fa' },
    { specId: 'b', size: 2, fingerprint: 'fb' },
  ];

  it('fills every pool to its size, and then changes nothing', () => {
    expect(planWarmPools(wants, [], 10)).toEqual({ retire: [], add: ['a', 'a', 'b', 'b'] });
    const full = [member('1'), member('2', { status: 'STARTING' }), member('3', { specId: 'b', fingerprint: 'fb' }), member('4', { specId: 'b', fingerprint: 'fb' })];
    expect(planWarmPools(wants, full, 10)).toEqual({ retire: [], add: [] });
  });

  it('retires stale members (spec or image changed) and those of specs without a pool, and replaces them', () => {
    const plan = planWarmPools(wants, [member('old', { fingerprint: 'before' }), member('1'), member('gone', { specId: 'deleted' })], 10);
    expect(plan.retire.sort()).toEqual(['gone', 'old']);
    expect(plan.add).toEqual(['a', 'b', 'b']);
  });

  it('retires failed members but replaces them only at the next sweep', () => {
    const plan = planWarmPools(wants.slice(0, 1), [member('1'), member('bad', { status: 'ERROR' })], 10);
    expect(plan).toEqual({ retire: ['bad'], add: [] });
    expect(planWarmPools(wants.slice(0, 1), [member('1')], 10)).toEqual({ retire: [], add: ['a'] });
  });

  it('retires members on an engine that takes no new sandboxes and replaces them at once', () => {
    const plan = planWarmPools(wants.slice(0, 1), [member('1'), member('on-draining', { displaced: true }), member('starting-there', { status: 'STARTING', displaced: true })], 10);
    expect(plan.retire.sort()).toEqual(['on-draining', 'starting-there']);
    expect(plan.add).toEqual(['a']);
  });

  it('keeps ready members over starting ones when a pool holds too many', () => {
    const plan = planWarmPools([{ specId: 'a', size: 1, fingerprint: 'fa' }], [member('slow', { status: 'STARTING' }), member('ready')], 10);
    expect(plan).toEqual({ retire: ['slow'], add: [] });
  });

  it('holds no more members than the cap across all pools, filling pools in the order given', () => {
    expect(planWarmPools(wants, [], 3)).toEqual({ retire: [], add: ['a', 'a', 'b'] });
    expect(planWarmPools(wants, [member('1', { specId: 'b', fingerprint: 'fb' })], 2)).toEqual({ retire: [], add: ['a'] });
    expect(planWarmPools(wants, [], 0)).toEqual({ retire: [], add: [] });
  });
});
