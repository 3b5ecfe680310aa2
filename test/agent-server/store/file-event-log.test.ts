import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DuplicateEventIdError,
  EventLogUnavailableError,
  openEventLog,
  UnknownPageIdError,
  type StoredEvent,
} from '../../../src/agent-server/store/index.js';
import { eventMaker, makeTempDir, messageText } from './fixtures.js';
import { seededRandom } from '../../helpers/seeded-random.js';

function event(id: string, timestamp: string, extra: Record<string, unknown> = {}): StoredEvent {
  return { id, kind: 'PauseEvent', source: 'user', timestamp, ...extra };
}

async function lines(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  return text.split('\n').slice(0, -1);
}

describe('file event log', () => {
  let dir: string;
  let file: string;
  let remove: () => Promise<void>;

  beforeEach(async () => {
    ({ dir, remove } = await makeTempDir());
    file = join(dir, 'conversations', 'c1', 'events.ndjson');
  });

  afterEach(() => remove());

  it('creates its directories and file, appends and gets events', async () => {
    const log = await openEventLog(file);
    expect(log.size).toBe(0);
    const first = event('a', '2024-01-01T00:00:00Z', { note: 'ünïcode ✓' });
    await log.append([first]);
    await log.append([event('b', '2024-01-01T00:00:01Z')]);
    expect(log.size).toBe(2);
    expect(await log.get('a')).toEqual(first);
    expect(await log.get('missing')).toBeUndefined();
    expect(log.positionOf('b')).toBe(1);
    expect(log.positionOf('missing')).toBeUndefined();
    expect(await lines(file)).toEqual([JSON.stringify(first), JSON.stringify(event('b', '2024-01-01T00:00:01Z'))]);
    await log.close();
  });

  it('reads events from disk when they are no longer cached', async () => {
    const log = await openEventLog(file, { cacheSize: 2 });
    const maker = eventMaker(seededRandom(1));
    const events = Array.from({ length: 50 }, () => maker.next());
    await log.append(events);
    expect(await log.readRange(0, 50)).toEqual(events);
    expect(await log.readRange(10, 13)).toEqual(events.slice(10, 13));
    expect(await log.readRange(45, 99)).toEqual(events.slice(45));
    expect(await log.readRange(7, 7)).toEqual([]);
    expect(await log.get(events[3]!.id)).toEqual(events[3]);
    await log.close();
  });

  it('reads stored records as their JSON lines, the text a stream sends unchanged', async () => {
    const log = await openEventLog(file, { cacheSize: 2 });
    const maker = eventMaker(seededRandom(2));
    const events = Array.from({ length: 20 }, () => maker.next());
    await log.append(events);
    const lines = await log.readLines(5, 9);
    expect(lines).toEqual((await log.readRange(5, 9)).map((event) => JSON.stringify(event)));
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual(events.slice(5, 9));
    expect(await log.readLines(18, 99)).toHaveLength(2);
    expect(await log.readLines(7, 7)).toEqual([]);
    await log.close();
  });

  it('keeps every event, in order, across a reopen', async () => {
    const maker = eventMaker(seededRandom(2));
    const events = Array.from({ length: 500 }, () => maker.next());
    const log = await openEventLog(file, { searchableText: messageText });
    for (let i = 0; i < events.length; i += 50) await log.append(events.slice(i, i + 50));
    const before = await log.search({ sortOrder: 'TIMESTAMP', limit: 100, body: 'a' });
    await log.close();

    const reopened = await openEventLog(file, { searchableText: messageText });
    expect(reopened.size).toBe(500);
    expect(await reopened.readRange(0, 500)).toEqual(events);
    expect(await reopened.search({ sortOrder: 'TIMESTAMP', limit: 100, body: 'a' })).toEqual(before);
    await reopened.append([event('after-reopen', '2030-01-01T00:00:00Z')]);
    expect(reopened.positionOf('after-reopen')).toBe(500);
    await reopened.close();
  });

  it('refuses a batch holding a stored id, writing none of it', async () => {
    const log = await openEventLog(file);
    await log.append([event('a', '2024-01-01T00:00:00Z')]);
    const error = await log.append([event('b', '2024-01-01T00:00:01Z'), event('a', '2024-01-01T00:00:02Z')]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateEventIdError);
    expect((error as DuplicateEventIdError).code).toBe('invalid');
    expect((error as DuplicateEventIdError).duplicates).toEqual([{ index: 1, id: 'a', reason: 'stored' }]);
    expect((error as DuplicateEventIdError).invalid).toEqual([
      { in: 'body', field: [1, 'id'], msg: 'Event id a already exists', type: 'value_error' },
    ]);
    expect(log.size).toBe(1);
    expect(log.positionOf('b')).toBeUndefined();
    expect(await lines(file)).toHaveLength(1);
    await log.close();
  });

  it('refuses a batch that repeats an id, or takes one a pending batch holds', async () => {
    const log = await openEventLog(file);
    const repeated = log.append([event('x', '2024-01-01T00:00:00Z'), event('y', '2024-01-01T00:00:00Z'), event('x', '2024-01-01T00:00:00Z')]);
    await expect(repeated).rejects.toMatchObject({
      duplicates: [{ index: 2, id: 'x', reason: 'repeated' }],
      invalid: [{ in: 'body', field: [2, 'id'], msg: 'Event id x is repeated in the batch', type: 'value_error' }],
    });
    const pending = log.append([event('p', '2024-01-01T00:00:00Z')]);
    await expect(log.append([event('p', '2024-01-01T00:00:01Z')])).rejects.toBeInstanceOf(DuplicateEventIdError);
    await pending;
    expect(log.size).toBe(1);
    expect(await lines(file)).toEqual([JSON.stringify(event('p', '2024-01-01T00:00:00Z'))]);
    await log.close();
  });

  it('refuses events without a usable envelope before writing anything', async () => {
    const log = await openEventLog(file);
    await expect(log.append([event('ok', '2024-01-01T00:00:00Z'), event('bad', 'yesterday')])).rejects.toBeInstanceOf(TypeError);
    await expect(log.append([{ kind: 'PauseEvent', source: 'user', timestamp: '2024-01-01T00:00:00Z' } as unknown as StoredEvent])).rejects.toBeInstanceOf(TypeError);
    expect(log.size).toBe(0);
    expect(await readFile(file, 'utf8')).toBe('');
    await log.close();
  });

  it('refuses an unknown page id, naming the page_id query parameter', async () => {
    const log = await openEventLog(file);
    await log.append([event('a', '2024-01-01T00:00:00Z')]);
    const error = await log.search({ sortOrder: 'TIMESTAMP', limit: 10, pageId: 'nope' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnknownPageIdError);
    expect((error as UnknownPageIdError).code).toBe('invalid');
    expect((error as UnknownPageIdError).pageId).toBe('nope');
    expect((error as UnknownPageIdError).invalid).toEqual([{ in: 'query', field: ['page_id'], msg: 'Unknown page_id', type: 'value_error' }]);
    await log.close();
  });

  it('sorts events appended out of timestamp order at their place, ties by position', async () => {
    const log = await openEventLog(file);
    await log.append([event('t3', '2024-01-01T00:00:03Z'), event('t5', '2024-01-01T00:00:05Z')]);
    await log.append([event('t1', '2024-01-01T00:00:01Z')]);
    await log.append([event('t4', '2024-01-01T00:00:04Z'), event('t0', '2023-12-31T23:59:59.999999'), event('t3b', '2024-01-01T01:00:03+01:00')]);
    await log.append([event('t6', '2024-01-01T00:00:06Z')]);
    const ids = async (sortOrder: 'TIMESTAMP' | 'TIMESTAMP_DESC') =>
      (await log.search({ sortOrder, limit: 100 })).items.map((e) => e.id);
    const ascending = ['t0', 't1', 't3', 't3b', 't4', 't5', 't6'];
    expect(await ids('TIMESTAMP')).toEqual(ascending);
    expect(await ids('TIMESTAMP_DESC')).toEqual([...ascending].reverse());
    const range = await log.search({ sortOrder: 'TIMESTAMP', limit: 100, timestampGte: Date.UTC(2024, 0, 1, 0, 0, 1), timestampLt: Date.UTC(2024, 0, 1, 0, 0, 4) });
    expect(range.items.map((e) => e.id)).toEqual(['t1', 't3', 't3b']);
    await log.close();

    const reopened = await openEventLog(file);
    expect((await reopened.search({ sortOrder: 'TIMESTAMP', limit: 100 })).items.map((e) => e.id)).toEqual(ascending);
    await reopened.close();
  });

  it('group-commits appends that arrive while a write is in flight, and lands them all in call order', async () => {
    const log = await openEventLog(file);
    const sizes: number[] = [];
    log.onAppend((size) => sizes.push(size));
    const maker = eventMaker(seededRandom(3));
    const batches = Array.from({ length: 50 }, (_, i) => Array.from({ length: 1 + (i % 3) }, () => maker.next()));
    await Promise.all(batches.map((batch) => log.append(batch)));
    const all = batches.flat();
    // The first append starts a write at once; the 49 made while it runs share the next one.
    expect(sizes).toEqual([batches[0]!.length, all.length]);
    expect(await lines(file)).toEqual(all.map((e) => JSON.stringify(e)));
    expect(await log.readRange(0, log.size)).toEqual(all);
    await log.close();
  });

  it('tells listeners after each durable batch, survives a throwing one, and unsubscribes', async () => {
    const log = await openEventLog(file);
    const heard: number[] = [];
    log.onAppend(() => {
      throw new Error('listener bug');
    });
    const stop = log.onAppend((size) => heard.push(size));
    await log.append([event('a', '2024-01-01T00:00:00Z')]);
    expect(heard).toEqual([1]);
    stop();
    await log.append([event('b', '2024-01-01T00:00:00Z')]);
    expect(heard).toEqual([1]);
    await log.close();
  });

  it('exports the stored lines in append order', async () => {
    const log = await openEventLog(file);
    const maker = eventMaker(seededRandom(4));
    const events = Array.from({ length: 300 }, () => maker.next());
    await log.append(events);
    const exported: string[] = [];
    for await (const line of log.exportLines()) exported.push(line);
    expect(exported.join('')).toBe(await readFile(file, 'utf8'));
    expect(exported.map((line) => JSON.parse(line))).toEqual(events);
    expect(exported.every((line) => line.endsWith('\n') && line.indexOf('\n') === line.length - 1)).toBe(true);
    await log.close();
  });

  it('finishes queued appends on close and refuses later ones', async () => {
    const log = await openEventLog(file);
    const pending = log.append([event('a', '2024-01-01T00:00:00Z')]);
    const closed = log.close();
    await expect(log.append([event('b', '2024-01-01T00:00:00Z')])).rejects.toBeInstanceOf(EventLogUnavailableError);
    await pending;
    await closed;
    expect(await lines(file)).toHaveLength(1);
  });

  it('loads and exports records larger than a read chunk, and records straddling chunks', async () => {
    const log = await openEventLog(file);
    const big = event('big', '2024-01-01T00:00:00Z', { note: 'ü'.repeat(3_000_000) });
    const small = Array.from({ length: 500 }, (_, i) => event(`s${i}`, '2024-01-01T00:00:01Z', { note: 'x'.repeat(i % 700) }));
    await log.append([small[0]!, big, ...small.slice(1)]);
    await log.close();

    const reopened = await openEventLog(file, { cacheSize: 0 });
    expect(reopened.size).toBe(501);
    expect(await reopened.get('big')).toEqual(big);
    expect(await reopened.readRange(0, 501)).toEqual([small[0], big, ...small.slice(1)]);
    let exported = '';
    for await (const line of reopened.exportLines()) exported += line;
    expect(exported).toBe(await readFile(file, 'utf8'));
    await reopened.close();
  });

  // /dev/full opens like a file and fails every write with ENOSPC: a disk that fills up mid-append.
  it.runIf(existsSync('/dev/full'))('refuses appends after a failed write until reopened', async () => {
    const log = await openEventLog('/dev/full');
    const heard: number[] = [];
    log.onAppend((size) => heard.push(size));
    await expect(log.append([event('a', '2024-01-01T00:00:00Z')])).rejects.toMatchObject({ code: 'ENOSPC' });
    await expect(log.append([event('b', '2024-01-01T00:00:00Z')])).rejects.toBeInstanceOf(EventLogUnavailableError);
    expect(log.size).toBe(0);
    expect(log.positionOf('a')).toBeUndefined();
    expect(heard).toEqual([]);
    await log.close();
  });

  it('opens an existing log written by another process', async () => {
    const events = [event('w1', '2024-01-01T00:00:00Z'), event('w2', '2024-01-01T00:00:00Z')];
    await writeFile(join(dir, 'given.ndjson'), events.map((e) => `${JSON.stringify(e)}\n`).join(''));
    const log = await openEventLog(join(dir, 'given.ndjson'));
    expect(await log.readRange(0, 2)).toEqual(events);
    await log.close();
  });
});
