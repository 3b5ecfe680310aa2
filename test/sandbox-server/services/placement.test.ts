import { describe, expect, it } from 'vitest';
import { chooseEngine, type PlacementCandidate } from '../../../src/sandbox-server/services/sandboxes/placement.js';

function engine(name: string, overrides: Partial<PlacementCandidate> = {}): PlacementCandidate {
  return { name, state: 'ACTIVE', health: 'HEALTHY', maxSandboxes: null, labels: {}, live: 0, ...overrides };
}

describe('chooseEngine', () => {
  it('takes the least loaded engine, ties by name', () => {
    expect(chooseEngine([engine('b', { live: 2 }), engine('a', { live: 3 }), engine('c', { live: 2 })], {})).toEqual({ engine: 'b' });
    expect(chooseEngine([engine('b'), engine('a')], {})).toEqual({ engine: 'a' });
  });

  it('gives an engine not looked at yet the benefit of the doubt, and an unreachable one only when nothing else fits', () => {
    expect(chooseEngine([engine('a', { health: 'UNREACHABLE' }), engine('b', { health: null, live: 9 })], {})).toEqual({ engine: 'b' });
    expect(chooseEngine([engine('a', { health: 'UNREACHABLE', live: 3 }), engine('b', { state: 'CORDONED' })], {})).toEqual({ engine: 'a' });
  });

  it('skips cordoned, draining and full engines, and those lacking a constraint label', () => {
    const engines = [
      engine('cordoned', { state: 'CORDONED' }),
      engine('draining', { state: 'DRAINING' }),
      engine('full', { maxSandboxes: 2, live: 2, labels: { zone: 'a' } }),
      engine('other-zone', { labels: { zone: 'b' } }),
      engine('fits', { maxSandboxes: 3, live: 2, labels: { zone: 'a', gpu: 'none' } }),
    ];
    expect(chooseEngine(engines, { zone: 'a' })).toEqual({ engine: 'fits' });
    expect(chooseEngine(engines, {})).toEqual({ engine: 'other-zone' });
  });

  it('says why no engine fits', () => {
    const engines = [
      engine('a', { state: 'CORDONED' }),
      engine('b', { health: 'UNREACHABLE', state: 'DRAINING' }),
      engine('c', { maxSandboxes: 1, live: 1 }),
      engine('d', { labels: { zone: 'b' } }),
    ];
    expect(chooseEngine(engines, { zone: 'a' })).toEqual({
      engine: null,
      why: 'no engine can take a new sandbox: a is cordoned; b is draining; c is full (1/1); d lacks the label zone=a',
    });
    expect(chooseEngine([], {})).toEqual({ engine: null, why: 'no engine is registered' });
  });
});
