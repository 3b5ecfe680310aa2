import { appendFile, copyFile, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEventLog, type EventLog, type EventLogOptions, type EventSortOrder, type StoredEvent } from '../../../src/agent-server/store/index.js';
import { eventMaker, makeTempDir, messageText, naiveSearch, randomFilter, type EventMaker } from './fixtures.js';
import { seededRandom } from '../../helpers/seeded-random.js';

const RARE = 'zyzzyva';
const ORDERS: EventSortOrder[] = ['TIMESTAMP', 'TIMESTAMP_DESC'];
/** Checkpoint after every batch: the tests want checkpoints at many points of a small log. */
const EAGER: EventLogOptions = { searchableText: messageText, textVersion: 'v1', checkpointBytes: 1, cacheSize: 0 };
const NEVER: EventLogOptions = { ...EAGER, checkpointBytes: Number.POSITIVE_INFINITY };

/** The fixtures' events, with a rare word in one message of about 300 (what the text index is for). */
function rareWordMaker(random: () => number, prefix: string): EventMaker {
  const maker = eventMaker(random, prefix);
  let messages = 0;
  return {
    next() {
      const event = maker.next();
      if (event.kind !== 'MessageEvent' || ++messages % 300 !== 0) return event;
      const message = event.llm_message as { content: { type: string; text: string }[] };
      return { ...event, llm_message: { ...message, content: [{ type: 'text', text: `${message.content[0]!.text} ${RARE.toUpperCase()}s` }] } };
    },
  };
}

// Thousands of appends and a full replay to compare against per test: seconds alone, and several
// times that on a loaded CI machine.
describe('event log checkpoints', { timeout: 120_000 }, () => {
  let dir: string;
  let file: string;
  let remove: () => Promise<void>;
  const opened: EventLog[] = [];

  beforeEach(async () => {
    const temp = await makeTempDir();
    dir = temp.dir;
    remove = temp.remove;
    file = join(dir, 'events.ndjson');
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((log) => log.close()));
    await remove();
  });

  async function open(path: string, options: EventLogOptions = EAGER): Promise<EventLog> {
    const log = await openEventLog(path, options);
    opened.push(log);
    return log;
  }

  /** The log file alone, copied elsewhere and opened: the index a full replay builds. */
  async function replayed(name: string): Promise<EventLog> {
    const copy = join(dir, `${name}.ndjson`);
    await copyFile(file, copy);
    const log = await open(copy, NEVER);
    expect(log.recovery.checkpointedBytes).toBe(0);
    return log;
  }

  async function appendBatches(log: EventLog, maker: EventMaker, random: () => number, count: number): Promise<StoredEvent[]> {
    const appended: StoredEvent[] = [];
    while (appended.length < count) {
      const batch = Array.from({ length: 1 + Math.floor(random() * 400) }, () => maker.next());
      await log.append(batch);
      appended.push(...batch);
    }
    return appended;
  }

  /** Random searches, counts and whole page walks answer alike on both logs, and as the reference does. */
  async function expectSameAnswers(restored: EventLog, reference: EventLog, events: readonly StoredEvent[], seed: number): Promise<void> {
    const random = seededRandom(seed);
    expect(restored.size).toBe(reference.size);
    expect(restored.size).toBe(events.length);
    const times = events.map((event) => Date.parse(event.timestamp.endsWith('Z') ? event.timestamp : `${event.timestamp}Z`));
    const spanMs = Math.max(...times) - Math.min(...times) + 1;
    for (let round = 0; round < 80; round++) {
      const filter = randomFilter(random, spanMs);
      if (round % 3 === 0) filter.body = [RARE, 'ZYZZ', 'yvas', 'ab', 'nothing-like-this'][round % 5];
      const sortOrder = ORDERS[round % 2]!;
      const limit = 1 + Math.floor(random() * 100);
      const expected = naiveSearch(events, filter, sortOrder);
      const label = JSON.stringify({ filter, sortOrder, limit });
      const page = await restored.search({ ...filter, sortOrder, limit });
      expect(page, label).toEqual(await reference.search({ ...filter, sortOrder, limit }));
      expect(page.items, label).toEqual(expected.slice(0, limit));
      expect(restored.count(filter), label).toBe(expected.length);
      if (page.nextPageId !== null && round % 10 === 0) {
        const next = { ...filter, sortOrder, limit, pageId: page.nextPageId };
        expect(await restored.search(next), label).toEqual(await reference.search(next));
      }
    }
    const sample = events.filter((_, i) => i % 97 === 0);
    for (const event of sample) expect(await restored.get(event.id)).toEqual(event);
    expect(await restored.get('no-such-id')).toBeUndefined();
  }

  it('restarts from the checkpoint and answers every search exactly as a full replay does', async () => {
    const random = seededRandom(11);
    const maker = rareWordMaker(random, 'a');
    const first = await open(file);
    const events = await appendBatches(first, maker, random, 6000);
    await first.close();
    const bytes = (await stat(file)).size;

    const restored = await open(file);
    expect(restored.recovery).toEqual({ checkpointedBytes: bytes, replayedBytes: 0 });
    await expectSameAnswers(restored, await replayed('replayed'), events, 1);
    expect(events.filter((event) => messageText(event)?.includes(RARE.toUpperCase())).length).toBeGreaterThan(1);

    // It keeps working as a log: appends after a restore land in the index and the next checkpoint.
    const more = await appendBatches(restored, maker, random, 1500);
    await restored.close();
    const again = await open(file);
    expect(again.recovery.replayedBytes).toBe(0);
    await expectSameAnswers(again, await replayed('replayed-again'), [...events, ...more], 2);
  });

  it('replays only the tail after a crash mid-append, cutting the torn record', async () => {
    const random = seededRandom(12);
    const maker = rareWordMaker(random, 'b');
    const first = await open(file);
    const events = await appendBatches(first, maker, random, 5000);
    await first.close();
    const checkpointed = (await stat(file)).size;

    // A second run appends without checkpointing, then dies mid-write: its last line is torn.
    const second = await open(file, NEVER);
    const tail = await appendBatches(second, maker, random, 700);
    await second.close();
    await appendFile(file, JSON.stringify(maker.next()).slice(0, 40));
    const intact = (await stat(file)).size - 40;

    const reference = await replayed('replayed');
    const restored = await open(file, NEVER);
    expect(restored.recovery).toEqual({ checkpointedBytes: checkpointed, replayedBytes: intact - checkpointed });
    expect((await stat(file)).size).toBe(intact);
    await expectSameAnswers(restored, reference, [...events, ...tail], 3);
  });

  it('answers as a full replay after an import of older events was interrupted mid-write', async () => {
    const random = seededRandom(15);
    const first = await open(file);
    const events = await appendBatches(first, rareWordMaker(random, 'f'), random, 4000);
    await first.close();
    const checkpointed = (await stat(file)).size;

    // An import is one batch of events older than every stored one (they merge into the time
    // order); the process died while writing it, so its last line is torn.
    const older = rareWordMaker(seededRandom(16), 'imported');
    const imported = Array.from({ length: 600 }, () => {
      const event = older.next();
      return { ...event, timestamp: new Date(Date.parse(`${event.timestamp.replace(/Z$/, '')}Z`) - 86_400_000).toISOString() };
    });
    const lines = imported.map((event) => `${JSON.stringify(event)}\n`).join('');
    await appendFile(file, lines.slice(0, lines.length - 30));
    const written = imported.slice(0, -1);

    const reference = await replayed('replayed');
    const restored = await open(file, NEVER);
    expect(restored.recovery.checkpointedBytes).toBe(checkpointed);
    expect(restored.recovery.replayedBytes).toBeGreaterThan(0);
    await expectSameAnswers(restored, reference, [...events, ...written], 6);
  });

  it('keeps appends and answers right while checkpoints are written under them', async () => {
    const random = seededRandom(13);
    const maker = rareWordMaker(random, 'c');
    const log = await open(file);
    const writers = Array.from({ length: 4 }, () => appendBatches(log, maker, random, 1500));
    const events = (await Promise.all(writers)).flat();
    const stored = await log.readRange(0, log.size);
    expect(new Set(stored.map((event) => event.id))).toEqual(new Set(events.map((event) => event.id)));
    await log.close();
    const restored = await open(file);
    expect(restored.recovery.replayedBytes).toBe(0);
    await expectSameAnswers(restored, await replayed('replayed'), stored, 4);
  });

  it('keeps texts beyond latin1 exactly, lone surrogates included', async () => {
    const texts = ['日本語のテキスト', 'emoji 🚀 launch', 'lone \ud800 surrogate', 'plain ascii', 'Größe'];
    const events: StoredEvent[] = texts.map((text, i) => ({
      id: `t${i}`,
      kind: 'MessageEvent',
      source: 'user',
      timestamp: new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString(),
      llm_message: { role: 'user', content: [{ type: 'text', text }] },
    }));
    const log = await open(file);
    await log.append(events);
    await log.close();
    const restored = await open(file);
    expect(restored.recovery.replayedBytes).toBe(0);
    for (const needle of ['本語', '🚀', '\ud800', '\ufffd', 'GRÖSSE', 'größe', 'ascii']) {
      for (const sortOrder of ORDERS) {
        const expected = naiveSearch(events, { body: needle }, sortOrder);
        expect((await restored.search({ body: needle, sortOrder, limit: 10 })).items, needle).toEqual(expected);
      }
    }
  });

  describe('falls back to a full replay, never to a wrong answer', () => {
    let events: StoredEvent[];
    let checkpoint: string;

    beforeEach(async () => {
      const random = seededRandom(14);
      const log = await open(file);
      events = await appendBatches(log, rareWordMaker(random, 'd'), random, 3000);
      await log.close();
      checkpoint = `${file}.checkpoint`;
      expect((await stat(checkpoint)).size).toBeGreaterThan(0);
    });

    async function expectFullReplay(options: EventLogOptions = NEVER, expected = events): Promise<void> {
      const reference = await replayed('replayed');
      const restored = await open(file, options);
      expect(restored.recovery.checkpointedBytes).toBe(0);
      await expectSameAnswers(restored, reference, expected, 5);
    }

    it('when the checkpoint is torn', async () => {
      await truncate(checkpoint, (await stat(checkpoint)).size - 100);
      await expectFullReplay();
    });

    it('when a byte of the checkpoint changed', async () => {
      const bytes = await readFile(checkpoint);
      bytes[bytes.length - 5000]! ^= 0x55;
      await writeFile(checkpoint, bytes);
      await expectFullReplay();
    });

    it('when the checkpoint is of another format', async () => {
      await writeFile(checkpoint, 'not a checkpoint');
      await expectFullReplay();
    });

    it('when the log is shorter than the checkpoint says', async () => {
      const lines = (await readFile(file, 'utf8')).split('\n').slice(0, 1000);
      await writeFile(file, `${lines.join('\n')}\n`);
      await expectFullReplay(NEVER, events.slice(0, 1000));
    });

    it('when the log is another one (same length or longer)', async () => {
      const random = seededRandom(99);
      const other = rareWordMaker(random, 'e');
      const replacement = Array.from({ length: events.length + 50 }, () => other.next());
      await writeFile(file, replacement.map((event) => `${JSON.stringify(event)}\n`).join(''));
      await expectFullReplay(NEVER, replacement);
    });

    it('when its searchable texts were made by another version', async () => {
      await expectFullReplay({ ...NEVER, textVersion: 'v2' });
    });
  });
});
