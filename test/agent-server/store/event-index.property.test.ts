import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventFilter } from '../../../src/agent-server/store/event-log.js';
import { EventIndex, type IndexedRecord } from '../../../src/agent-server/store/event-index.js';

/**
 * The index's pages and counts against a naive reference (filter everything, sort by (timestamp,
 * position), cut at the page's first position, slice) on random logs: few kinds and sources so the
 * posting lists interleave, timestamps that tie and go back (imports merged into the lists), texts
 * over a tiny alphabet so one- and two-letter needles match often and longer ones seldom.
 */
const KINDS = ['A', 'B', 'C', 'D'];
const SOURCES = ['user', 'agent', 'environment'];

interface Spec {
  kind: number;
  source: number;
  time: number;
  text: string | null;
}

const specArbitrary = fc.record({
  kind: fc.integer({ min: 0, max: KINDS.length - 1 }),
  source: fc.integer({ min: 0, max: SOURCES.length - 1 }),
  time: fc.integer({ min: 0, max: 40 }),
  text: fc.option(fc.string({ unit: fc.constantFrom('a', 'b', 'C', ' '), maxLength: 12 }), { freq: 2 }),
});

const filterArbitrary: fc.Arbitrary<EventFilter> = fc.record(
  {
    kind: fc.constantFrom(...KINDS, 'Unknown'),
    source: fc.constantFrom(...SOURCES, 'nobody'),
    body: fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'A'), minLength: 1, maxLength: 3 }),
    timestampGte: fc.integer({ min: -1, max: 41 }),
    timestampLt: fc.integer({ min: -1, max: 41 }),
  },
  { requiredKeys: [] },
);

function indexOf(batches: Spec[][]): EventIndex {
  const index = new EventIndex();
  let position = 0;
  for (const batch of batches) {
    index.add(
      batch.map((spec): IndexedRecord => {
        const id = `e${position++}`;
        return { id, kind: KINDS[spec.kind]!, source: SOURCES[spec.source]!, timestampMs: spec.time, text: spec.text, offset: 0, length: 1 };
      }),
    );
  }
  return index;
}

function naive(specs: Spec[], filter: EventFilter, descending: boolean, limit: number, from: number | undefined) {
  const before = (a: number, b: number) => specs[a]!.time < specs[b]!.time || (specs[a]!.time === specs[b]!.time && a < b);
  const needle = filter.body?.toLowerCase();
  const matches = specs
    .map((spec, position) => ({ spec, position }))
    .filter(({ spec }) => filter.kind === undefined || KINDS[spec.kind] === filter.kind)
    .filter(({ spec }) => filter.source === undefined || SOURCES[spec.source] === filter.source)
    .filter(({ spec }) => filter.timestampGte === undefined || spec.time >= filter.timestampGte)
    .filter(({ spec }) => filter.timestampLt === undefined || spec.time < filter.timestampLt)
    .filter(({ spec }) => needle === undefined || (spec.text !== null && spec.text.toLowerCase().includes(needle)))
    .map(({ position }) => position)
    .sort((a, b) => (before(a, b) ? -1 : 1));
  if (descending) matches.reverse();
  const kept = from === undefined ? matches : matches.filter((position) => position === from || before(from, position) !== descending);
  return { positions: kept.slice(0, limit), next: kept[limit], count: matches.length };
}

describe('event index against a naive reference', () => {
  it('answers every page and count as the reference does, from any page start, in both orders', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(specArbitrary, { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 8 }),
        filterArbitrary,
        fc.boolean(),
        fc.integer({ min: 1, max: 12 }),
        fc.option(fc.nat()),
        (batches, filter, descending, limit, fromSeed) => {
          const specs = batches.flat();
          const index = indexOf(batches);
          const from = fromSeed === null ? undefined : fromSeed % specs.length;
          const expected = naive(specs, filter, descending, limit, from);
          expect(index.select(filter, descending, limit, from)).toEqual({ positions: expected.positions, next: expected.next });
          expect(index.count(filter)).toBe(expected.count);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('walks every match exactly once, page by page, whatever the page size', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(specArbitrary, { minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 6 }),
        filterArbitrary,
        fc.boolean(),
        fc.integer({ min: 1, max: 7 }),
        (batches, filter, descending, limit) => {
          const specs = batches.flat();
          const index = indexOf(batches);
          const seen: number[] = [];
          let from: number | undefined;
          do {
            const page = index.select(filter, descending, limit, from);
            seen.push(...page.positions);
            from = page.next;
          } while (from !== undefined);
          expect(seen).toEqual(naive(specs, filter, descending, Number.MAX_SAFE_INTEGER, undefined).positions);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('answers the same from a checkpoint of its state as the index it was taken from', () => {
    fc.assert(
      fc.property(fc.array(fc.array(specArbitrary, { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 5 }), filterArbitrary, fc.boolean(), (batches, filter, descending) => {
        const index = indexOf(batches);
        const restored = new EventIndex(index.state());
        expect(restored.select(filter, descending, 10)).toEqual(index.select(filter, descending, 10));
        expect(restored.count(filter)).toBe(index.count(filter));
      }),
      { numRuns: 200 },
    );
  });

  it('reads only the lists of a rare pair: a kind never from a source answers at once with nothing', () => {
    const index = new EventIndex();
    const records = Array.from({ length: 5000 }, (_, i): IndexedRecord => {
      const rare = i % 1000 === 999;
      return { id: `e${i}`, kind: rare ? 'Rare' : 'Common', source: rare ? 'user' : 'agent', timestampMs: i, text: null, offset: 0, length: 1 };
    });
    index.add(records);
    expect(index.select({ kind: 'Rare' }, false, 2)).toEqual({ positions: [999, 1999], next: 2999 });
    expect(index.select({ kind: 'Rare' }, true, 2, 2999)).toEqual({ positions: [2999, 1999], next: 999 });
    expect(index.select({ kind: 'Common', source: 'user' }, false, 10)).toEqual({ positions: [], next: undefined });
    expect(index.count({ source: 'user', timestampGte: 1000, timestampLt: 4000 })).toBe(3);
  });
});
