import { describe, expect, it } from 'vitest';
import { openEventLog, type StoredEvent } from '../../../src/agent-server/store/index.js';
import { RUN_BYTES, releaseReadBuffer, takeReadBuffer } from '../../../src/agent-server/store/read-buffers.js';
import { makeTempDir } from './fixtures.js';

describe('read buffers', () => {
  it('reuses a run-sized buffer for large reads, and allocates small and oversized ones exactly', () => {
    const large = takeReadBuffer(200 * 1024);
    expect(large.length).toBe(RUN_BYTES);
    releaseReadBuffer(large);
    expect(takeReadBuffer(300 * 1024)).toBe(large);
    const small = takeReadBuffer(700);
    expect(small.length).toBe(700);
    const oversized = takeReadBuffer(RUN_BYTES + 1);
    expect(oversized.length).toBe(RUN_BYTES + 1);
    releaseReadBuffer(small);
    releaseReadBuffer(oversized);
    releaseReadBuffer(large);
    expect(takeReadBuffer(100 * 1024)).toBe(large);
    releaseReadBuffer(large);
  });

  it('answers concurrent searches whose pages span pooled buffers with their own events', async () => {
    const temp = await makeTempDir();
    const log = await openEventLog(`${temp.dir}/events.ndjson`, { cacheSize: 0 });
    try {
      const padding = 'x'.repeat(20_000);
      const events: StoredEvent[] = Array.from({ length: 120 }, (_, i) => ({
        id: `big-${i}`,
        kind: i % 3 === 0 ? 'A' : 'B',
        source: i % 2 === 0 ? 'user' : 'agent',
        timestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
        padding: `${i}${padding}`,
      }));
      await log.append(events);
      const pages = await Promise.all([
        log.search({ kind: 'A', sortOrder: 'TIMESTAMP', limit: 30 }),
        log.search({ source: 'agent', sortOrder: 'TIMESTAMP_DESC', limit: 50 }),
        log.search({ sortOrder: 'TIMESTAMP', limit: 100 }),
      ]);
      expect(pages.map((page) => page.items.map((event) => event.id))).toEqual([
        events.filter((event) => event.kind === 'A').slice(0, 30).map((event) => event.id),
        events.filter((event) => event.source === 'agent').reverse().slice(0, 50).map((event) => event.id),
        events.slice(0, 100).map((event) => event.id),
      ]);
      expect(pages.flatMap((page) => page.items).every((event) => event.padding === `${event.id.slice(4)}${padding}`)).toBe(true);
    } finally {
      await log.close();
      await temp.remove();
    }
  });
});
