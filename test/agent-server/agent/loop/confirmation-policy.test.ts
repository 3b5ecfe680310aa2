import { describe, expect, it } from 'vitest';
import { needsConfirmation, type ConfirmationPolicy } from '../../../../src/agent-server/agent/loop/confirmation-policy.js';
import { finish, think } from './event-builders.js';

const risky = (threshold: 'LOW' | 'MEDIUM' | 'HIGH', confirm_unknown = true): ConfirmationPolicy => ({
  kind: 'ConfirmRisky',
  threshold,
  confirm_unknown,
});
const actions = (...risks: ('UNKNOWN' | 'LOW' | 'MEDIUM' | 'HIGH')[]) =>
  risks.map((risk, i) => think(`t${i}`, `c${i}`, 'r1', { risk }));

describe('whether actions wait for confirmation', () => {
  it.each([
    ['NeverConfirm', { kind: 'NeverConfirm' }, actions('HIGH', 'HIGH'), false],
    ['AlwaysConfirm', { kind: 'AlwaysConfirm' }, actions('LOW', 'LOW'), true],
    ['ConfirmRisky below the threshold', risky('HIGH'), actions('LOW', 'MEDIUM'), false],
    ['ConfirmRisky at the threshold', risky('MEDIUM'), actions('LOW', 'MEDIUM'), true],
    ['ConfirmRisky above the threshold', risky('LOW'), actions('HIGH', 'LOW'), true],
    ['ConfirmRisky with an UNKNOWN risk', risky('HIGH'), actions('LOW', 'UNKNOWN'), true],
    ['ConfirmRisky with an UNKNOWN risk, confirm_unknown off', risky('HIGH', false), actions('LOW', 'UNKNOWN'), false],
    ['ConfirmRisky with OpenHands defaults', { kind: 'ConfirmRisky' }, actions('MEDIUM', 'HIGH'), true],
    ['no actions', { kind: 'AlwaysConfirm' }, [], false],
  ] as [string, ConfirmationPolicy, ReturnType<typeof actions>, boolean][])('%s', (_, policy, pending, expected) => {
    expect(needsConfirmation(policy, pending)).toBe(expected);
  });

  it('never asks for a lone finish or think, but does for finish among others', () => {
    const always: ConfirmationPolicy = { kind: 'AlwaysConfirm' };
    expect(needsConfirmation(always, [finish('f', 'c1', 'r1')])).toBe(false);
    expect(needsConfirmation(always, [think('t', 'c1', 'r1')])).toBe(false);
    expect(needsConfirmation(always, [think('t', 'c1', 'r1'), finish('f', 'c2', 'r1')])).toBe(true);
  });
});
