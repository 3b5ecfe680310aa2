import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventLog, type EventFilter, type EventLog, type EventSortOrder, type StoredEvent } from '../../../src/agent-server/store/index.js';
import { eventMaker, makeTempDir, messageText, naiveSearch, randomFilter } from './fixtures.js';
import { seededRandom } from '../../helpers/seeded-random.js';

const ORDERS: EventSortOrder[] = ['TIMESTAMP', 'TIMESTAMP_DESC'];

describe('event log search against a naive reference', () => {
  const random = seededRandom(20240601);
  const events: StoredEvent[] = [];
  let log: EventLog;
  let remove: () => Promise<void>;
  let spanMs: number;

  beforeAll(async () => {
    const temp = await makeTempDir();
    remove = temp.remove;
    log = await openEventLog(`${temp.dir}/events.ndjson`, { searchableText: messageText, cacheSize: 64 });
    const maker = eventMaker(random);
    for (let batch = 0; batch < 60; batch++) {
      const size = 1 + Math.floor(random() * 80);
      const next = Array.from({ length: size }, () => maker.next());
      await log.append(next);
      events.push(...next);
    }
    const times = events.map((event) => Date.parse(event.timestamp.endsWith('Z') ? event.timestamp : `${event.timestamp}Z`));
    spanMs = Math.max(...times) - Math.min(...times) + 1;
  });

  afterAll(async () => {
    await log.close();
    await remove();
  });

  async function walk(filter: EventFilter, sortOrder: EventSortOrder, limit: number): Promise<StoredEvent[]> {
    const seen: StoredEvent[] = [];
    let pageId: string | undefined;
    do {
      const page = await log.search({ ...filter, sortOrder, limit, pageId });
      expect(page.items.length).toBeLessThanOrEqual(limit);
      if (page.nextPageId !== null) expect(page.items).toHaveLength(limit);
      seen.push(...page.items);
      pageId = page.nextPageId ?? undefined;
    } while (pageId !== undefined);
    return seen;
  }

  it('returns the first page, next page id and count of the reference for random filters', async () => {
    for (let round = 0; round < 300; round++) {
      const filter = randomFilter(random, spanMs);
      const sortOrder = ORDERS[round % 2]!;
      const limit = 1 + Math.floor(random() * 100);
      const expected = naiveSearch(events, filter, sortOrder);
      const page = await log.search({ ...filter, sortOrder, limit });
      expect(page.items, JSON.stringify({ filter, sortOrder, limit })).toEqual(expected.slice(0, limit));
      expect(page.nextPageId).toBe(expected[limit]?.id ?? null);
      expect(log.count(filter)).toBe(expected.length);
    }
  });

  it('pages through every match in order, in both orders', async () => {
    for (let round = 0; round < 40; round++) {
      const filter = randomFilter(random, spanMs);
      const sortOrder = ORDERS[round % 2]!;
      const limit = 1 + Math.floor(random() * 40);
      expect(await walk(filter, sortOrder, limit)).toEqual(naiveSearch(events, filter, sortOrder));
    }
  });

  it('sorts DESC as the exact reverse of ascending, ties included', async () => {
    const ascending = await walk({}, 'TIMESTAMP', 100);
    const descending = await walk({}, 'TIMESTAMP_DESC', 100);
    expect(ascending).toHaveLength(events.length);
    expect(descending).toEqual([...ascending].reverse());
  });

  it('combines every filter at once', async () => {
    const message = events.find((event) => event.kind === 'MessageEvent')!;
    const word = messageText(message)!.split(' ')[0]!.toUpperCase();
    const ms = Date.parse(message.timestamp.endsWith('Z') ? message.timestamp : `${message.timestamp}Z`);
    const filter = { kind: 'MessageEvent', source: message.source, body: word, timestampGte: ms, timestampLt: ms + 3_600_000 };
    const expected = naiveSearch(events, filter, 'TIMESTAMP');
    expect(expected.map((event) => event.id)).toContain(message.id);
    expect((await log.search({ ...filter, sortOrder: 'TIMESTAMP', limit: 100 })).items).toEqual(expected.slice(0, 100));
    expect(log.count(filter)).toBe(expected.length);
  });

  it('never matches a body filter on events without searchable text', async () => {
    const page = await log.search({ body: 'e', sortOrder: 'TIMESTAMP', limit: 100 });
    expect(page.items.length).toBeGreaterThan(0);
    expect(page.items.every((event) => event.kind === 'MessageEvent')).toBe(true);
  });

  it('finds nothing for a kind or source it has never stored', async () => {
    expect(await log.search({ kind: 'NoSuchKind', sortOrder: 'TIMESTAMP', limit: 10 })).toEqual({ items: [], nextPageId: null });
    expect(log.count({ source: 'nobody' })).toBe(0);
  });
});
