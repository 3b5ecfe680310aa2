import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEventLog, type EventLog, type EventQuery, type EventSortOrder, type StoredEvent } from '../../../src/agent-server/store/index.js';
import { BASE_MS, eventMaker, makeTempDir, messageText, naiveSearch, type EventMaker } from './fixtures.js';
import { seededRandom } from '../../helpers/seeded-random.js';

describe('paging while events are appended', () => {
  let log: EventLog;
  let remove: () => Promise<void>;

  beforeEach(async () => {
    const temp = await makeTempDir();
    remove = temp.remove;
    log = await openEventLog(join(temp.dir, 'events.ndjson'), { searchableText: messageText, cacheSize: 16 });
  });

  afterEach(async () => {
    await log.close();
    await remove();
  });

  /**
   * Walks every page of `query` while, between pages, other batches are appended without waiting
   * for them: live events newer than all others and imported ones older than some. Returns the ids
   * visited.
   */
  async function walkWhileAppending(query: Omit<EventQuery, 'pageId'>, maker: EventMaker, random: () => number): Promise<string[]> {
    const visited: string[] = [];
    const writes: Promise<void>[] = [];
    let pageId: string | undefined;
    do {
      const live = Array.from({ length: 1 + Math.floor(random() * 5) }, () => maker.next({ timestampMs: BASE_MS + 1e10 + random() * 1e6 }));
      const imported = Array.from({ length: Math.floor(random() * 3) }, () => maker.next({ timestampMs: BASE_MS + random() * 1e7 }));
      writes.push(log.append(live), log.append(imported));
      const page = await log.search({ ...query, pageId });
      visited.push(...page.items.map((event) => event.id));
      pageId = page.nextPageId ?? undefined;
    } while (pageId !== undefined);
    await Promise.all(writes);
    return visited;
  }

  for (const sortOrder of ['TIMESTAMP', 'TIMESTAMP_DESC'] as EventSortOrder[]) {
    it(`visits each event that existed at the start exactly once (${sortOrder})`, async () => {
      const random = seededRandom(sortOrder === 'TIMESTAMP' ? 6 : 7);
      const maker = eventMaker(random);
      const initial: StoredEvent[] = Array.from({ length: 1500 }, () => maker.next());
      await log.append(initial);
      const concurrent = eventMaker(random, 'new');

      for (const filter of [{}, { kind: 'MessageEvent' }, { source: 'agent', timestampGte: BASE_MS + 60_000 }]) {
        const visited = await walkWhileAppending({ ...filter, sortOrder, limit: 1 + Math.floor(random() * 30) }, concurrent, random);
        expect(new Set(visited).size).toBe(visited.length);
        const expected = naiveSearch(initial, filter, sortOrder).map((event) => event.id);
        expect(visited.filter((id) => !id.startsWith('new-'))).toEqual(expected);
      }
      expect(log.size).toBeGreaterThan(initial.length);
    });
  }

  it('reaches a deep page directly from its page id', async () => {
    const maker = eventMaker(seededRandom(8));
    const events = Array.from({ length: 3000 }, () => maker.next());
    await log.append(events);
    const expected = naiveSearch(events, {}, 'TIMESTAMP_DESC');
    const page = await log.search({ sortOrder: 'TIMESTAMP_DESC', limit: 10, pageId: expected[2500]!.id });
    expect(page.items).toEqual(expected.slice(2500, 2510));
    expect(page.nextPageId).toBe(expected[2510]!.id);
  });
});
