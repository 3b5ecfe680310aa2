import { describe, expect, it } from 'vitest';
import { ExpiringMap } from '../src/expiring-map.js';

describe('ExpiringMap', () => {
  it('forgets an entry ttl after it was set, and setting again renews it', () => {
    const map = new ExpiringMap<string, number>(1_000);
    map.set('a', 1, 0);
    expect(map.get('a', 999)).toBe(1);
    expect(map.get('a', 1_000)).toBeUndefined();
    map.set('a', 2, 1_000);
    expect(map.get('a', 1_999)).toBe(2);
    map.delete('a');
    expect(map.get('a', 1_000)).toBeUndefined();
  });

  it('holds at most its bound: the expired go first, then the oldest set', () => {
    const map = new ExpiringMap<string, number>(1_000, 3);
    map.set('old', 0, 0);
    map.set('a', 1, 500);
    map.set('b', 2, 600);
    map.set('c', 3, 1_200);
    expect([map.size, map.get('old', 1_200), map.get('a', 1_200)]).toEqual([3, undefined, 1]);
    map.set('a', 1, 1_300);
    map.set('d', 4, 1_400);
    expect(map.size).toBe(3);
    expect(['a', 'b', 'c', 'd'].map((key) => map.get(key, 1_400))).toEqual([1, undefined, 3, 4]);
  });
});
