/**
 * One conversation's event log: an append-only NDJSON file plus the in-memory index of ./event-index.
 *
 * Invariants:
 * - The file is a sequence of lines, one JSON event each, in position order: line n is position n.
 *   Positions have no gaps and a stored line never changes.
 * - `end` is the byte just after the last durable line. Everything before it is indexed; nothing
 *   after it is, until a write of it has been fsynced.
 * - A batch is validated whole (envelope, ids unique against the log, the batches still being
 *   written and itself) before any of it is queued: it is written entirely or not at all.
 * - One write and one fdatasync per group: batches that arrive while a write is in flight wait and
 *   go out together in the next one. Each `append` resolves after its group is durable and indexed,
 *   and `onAppend` listeners have heard the new size.
 * - A crash can only tear the last write, so at open unreadable lines at the end of the file are
 *   cut off (truncate + fsync). An unreadable line followed by readable ones is not a torn tail but
 *   outside damage: opening fails rather than dropping acknowledged events.
 * - A failed write or fsync leaves the file's tail unknown: the log then refuses further appends
 *   until it is reopened, which repairs the tail. Retrying an fsync after a failure can report
 *   success for data the kernel already dropped.
 * - Events handed out are parsed from the stored line (a cached copy may be handed out more than
 *   once): callers treat them as read-only.
 */
import type { FileHandle } from 'node:fs/promises';
import { logger } from '../../logger.js';
import { timestampMillis } from '../../events/timestamp.js';
import { CorruptEventLogError, DuplicateEventIdError, EventLogUnavailableError, type DuplicateEventId, UnknownPageIdError } from './errors.js';
import { EventIndex, type IndexedRecord } from './event-index.js';
import type { EventFilter, EventLog, EventLogPage, EventQuery, StoredEvent } from './event-log.js';
import { openLogFile, readBytes, readLines, writeBytes } from './log-file.js';
import { RecordCache } from './record-cache.js';

export interface EventLogOptions {
  /** The text a `body` filter searches; null when the event must never match one. */
  searchableText?: (event: StoredEvent) => string | null;
  /** How many parsed events to keep in memory for repeated reads. */
  cacheSize?: number;
}

const DEFAULT_CACHE_SIZE = 1000;
/** Contiguous records are read together, up to this many bytes per read. */
const READ_RUN_BYTES = 1024 * 1024;

export async function openEventLog<E extends StoredEvent>(file: string, options: EventLogOptions = {}): Promise<EventLog<E>> {
  const searchableText = options.searchableText ?? (() => null);
  const handle = await openLogFile(file);
  try {
    const index = new EventIndex();
    const end = await loadLog(handle, file, index, searchableText);
    return new FileEventLog<E>(file, handle, index, end, searchableText, options.cacheSize ?? DEFAULT_CACHE_SIZE);
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Indexes every readable line, cuts a torn tail, and returns the end of the last record. */
async function loadLog(
  handle: FileHandle,
  file: string,
  index: EventIndex,
  searchableText: (event: StoredEvent) => string | null,
): Promise<number> {
  const { size } = await handle.stat();
  let end = 0;
  let firstUnreadable: number | undefined;
  for await (const chunk of readLines(handle, 0, size)) {
    const records: IndexedRecord[] = [];
    const chunkIds = new Set<string>();
    chunk.forEachLine((text, offset, length) => {
      const event = parseEvent(text);
      const envelope = event && readEnvelope(event);
      if (!event || typeof envelope !== 'object') {
        firstUnreadable ??= offset;
        return;
      }
      if (firstUnreadable !== undefined) {
        throw new CorruptEventLogError(file, firstUnreadable, 'an unreadable line precedes readable ones');
      }
      const { id, kind, source, timestampMs } = envelope;
      if (index.positionOf(id) !== undefined || chunkIds.has(id)) {
        throw new CorruptEventLogError(file, offset, `event id ${id} is stored twice`);
      }
      chunkIds.add(id);
      records.push({ id, kind, source, timestampMs, text: searchableText(event), offset, length });
      end = offset + length;
    });
    index.add(records);
  }
  if (end < size) {
    await handle.truncate(end);
    await handle.datasync();
    logger.warn({ file, keptBytes: end, cutBytes: size - end }, 'event log: cut a torn tail');
  }
  return end;
}

function parseEvent(text: string): StoredEvent | undefined {
  try {
    return JSON.parse(text) as StoredEvent;
  } catch {
    return undefined;
  }
}

type Envelope = Pick<IndexedRecord, 'id' | 'kind' | 'source' | 'timestampMs'>;

/** The indexed fields of an event, or what is wrong with it. */
function readEnvelope(event: unknown): Envelope | string {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return 'is not a JSON object';
  const { id, kind, source, timestamp } = event as Record<string, unknown>;
  if (typeof id !== 'string' || id === '') return 'has no id';
  if (typeof kind !== 'string') return 'has no kind';
  if (typeof source !== 'string') return 'has no source';
  const timestampMs = typeof timestamp === 'string' ? timestampMillis(timestamp) : Number.NaN;
  if (Number.isNaN(timestampMs)) return 'has no ISO 8601 timestamp';
  return { id, kind, source, timestampMs };
}

/** An event ready to write: its line, and the copy parsed back from it that readers will see. */
interface PreparedEvent<E> {
  event: E;
  line: Buffer;
  envelope: Envelope;
  text: string | null;
}

interface PendingBatch<E> {
  events: PreparedEvent<E>[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

class FileEventLog<E extends StoredEvent> implements EventLog<E> {
  private readonly cache: RecordCache<E>;
  private readonly listeners = new Set<(size: number) => void>();
  /** Ids of queued or in-flight batches: taken, though not yet in the index. */
  private readonly pendingIds = new Set<string>();
  private queue: PendingBatch<E>[] = [];
  private flushing: Promise<void> | undefined;
  private failure: EventLogUnavailableError | undefined;
  private closed: EventLogUnavailableError | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly file: string,
    private readonly handle: FileHandle,
    private readonly index: EventIndex,
    private end: number,
    private readonly searchableText: (event: StoredEvent) => string | null,
    cacheSize: number,
  ) {
    this.cache = new RecordCache(cacheSize);
  }

  get size(): number {
    return this.index.size;
  }

  append(events: readonly E[]): Promise<void> {
    const refusal = this.failure ?? this.closed;
    if (refusal) return Promise.reject(refusal);
    if (events.length === 0) return Promise.resolve();
    let prepared: PreparedEvent<E>[];
    try {
      prepared = this.prepare(events);
    } catch (error) {
      return Promise.reject(error);
    }
    for (const { envelope } of prepared) this.pendingIds.add(envelope.id);
    return new Promise((resolve, reject) => {
      this.queue.push({ events: prepared, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  async get(id: string): Promise<E | undefined> {
    const position = this.index.positionOf(id);
    if (position === undefined) return undefined;
    const [event] = await this.readPositions([position], true);
    return event;
  }

  positionOf(id: string): number | undefined {
    return this.index.positionOf(id);
  }

  readRange(from: number, to: number): Promise<E[]> {
    const start = Math.max(0, Math.ceil(from));
    const stop = Math.min(this.index.size, Math.floor(to));
    const positions = Array.from({ length: Math.max(0, stop - start) }, (_, i) => start + i);
    // A replay of a long history would only flush the cache, so ranges read around it.
    return this.readPositions(positions, false);
  }

  async search(query: EventQuery): Promise<EventLogPage<E>> {
    if (!Number.isInteger(query.limit) || query.limit < 1) throw new RangeError(`limit must be a positive integer, got ${query.limit}`);
    let from: number | undefined;
    if (query.pageId !== undefined) {
      from = this.index.positionOf(query.pageId);
      if (from === undefined) throw new UnknownPageIdError();
    }
    const { positions, next } = this.index.select(query, query.sortOrder === 'TIMESTAMP_DESC', query.limit, from);
    const items = await this.readPositions(positions, true);
    return { items, nextPageId: next === undefined ? null : this.index.idAt(next) };
  }

  count(filter: EventFilter): number {
    return this.index.count(filter);
  }

  async *exportLines(): AsyncIterable<string> {
    for await (const chunk of readLines(this.handle, 0, this.end)) {
      const lines: string[] = [];
      chunk.forEachLine((text) => lines.push(`${text}\n`));
      yield* lines;
    }
  }

  onAppend(listener: (size: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): Promise<void> {
    this.closed ??= new EventLogUnavailableError(this.file, 'is closed');
    this.closing ??= (async () => {
      await this.flushing;
      await this.handle.close();
    })();
    return this.closing;
  }

  /** Serializes and checks a whole batch; throws before anything is queued. */
  private prepare(events: readonly E[]): PreparedEvent<E>[] {
    const seen = new Set<string>();
    const duplicates: DuplicateEventId[] = [];
    const prepared = events.map((original, index): PreparedEvent<E> => {
      const json = JSON.stringify(original);
      const event = (json === undefined ? undefined : JSON.parse(json)) as E;
      const envelope = readEnvelope(event);
      if (typeof envelope === 'string') throw new TypeError(`Event ${index} of the batch ${envelope}`);
      const { id } = envelope;
      if (this.index.positionOf(id) !== undefined || this.pendingIds.has(id)) duplicates.push({ index, id, reason: 'stored' });
      else if (seen.has(id)) duplicates.push({ index, id, reason: 'repeated' });
      seen.add(id);
      return { event, line: Buffer.from(`${json}\n`), envelope, text: this.searchableText(event) };
    });
    if (duplicates.length > 0) throw new DuplicateEventIdError(duplicates);
    return prepared;
  }

  /** Writes queued batches, one group per write + fsync, until the queue is empty. */
  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue;
      this.queue = [];
      if (this.failure) {
        this.settle(group, this.failure);
        continue;
      }
      try {
        await this.commit(group.flatMap((batch) => batch.events));
      } catch (error) {
        this.failure = new EventLogUnavailableError(this.file, 'failed a write; reopen it to repair its tail', { cause: error });
        await this.handle.truncate(this.end).catch(() => undefined);
        this.settle(group, error);
        continue;
      }
      this.notify();
      this.settle(group);
    }
    this.flushing = undefined;
  }

  private async commit(events: PreparedEvent<E>[]): Promise<void> {
    const bytes = Buffer.concat(events.map((event) => event.line));
    await writeBytes(this.handle, bytes, this.end);
    await this.handle.datasync();
    const first = this.index.size;
    const records: IndexedRecord[] = [];
    let offset = this.end;
    for (const { line, envelope, text } of events) {
      records.push({ ...envelope, text, offset, length: line.length });
      offset += line.length;
    }
    this.index.add(records);
    this.end = offset;
    events.forEach(({ event }, i) => this.cache.set(first + i, event));
  }

  private settle(group: PendingBatch<E>[], error?: unknown): void {
    for (const batch of group) {
      for (const { envelope } of batch.events) this.pendingIds.delete(envelope.id);
      if (error === undefined) batch.resolve();
      else batch.reject(error);
    }
  }

  private notify(): void {
    const size = this.index.size;
    for (const listener of this.listeners) {
      try {
        listener(size);
      } catch (error) {
        logger.error({ err: error, file: this.file }, 'event log: an onAppend listener threw');
      }
    }
  }

  /** Events at the given positions, in that order, reading contiguous uncached ones together. */
  private async readPositions(positions: readonly number[], remember: boolean): Promise<E[]> {
    const events = new Array<E>(positions.length);
    const missing: number[] = [];
    positions.forEach((position, i) => {
      const cached = this.cache.get(position);
      if (cached === undefined) missing.push(i);
      else events[i] = cached;
    });
    missing.sort((a, b) => positions[a]! - positions[b]!);
    const reads: Promise<void>[] = [];
    for (let runStart = 0; runStart < missing.length; ) {
      let runEnd = runStart + 1;
      let bytes = this.index.lengthOf(positions[missing[runStart]!]!);
      while (runEnd < missing.length) {
        const position = positions[missing[runEnd]!]!;
        if (position !== positions[missing[runEnd - 1]!]! + 1 || bytes + this.index.lengthOf(position) > READ_RUN_BYTES) break;
        bytes += this.index.lengthOf(position);
        runEnd++;
      }
      reads.push(this.readRun(positions, missing.slice(runStart, runEnd), bytes, events, remember));
      runStart = runEnd;
    }
    await Promise.all(reads);
    return events;
  }

  /** Reads one run of consecutive positions (given as indexes into `positions`) with one read. */
  private async readRun(positions: readonly number[], run: number[], bytes: number, into: E[], remember: boolean): Promise<void> {
    const start = this.index.offsetOf(positions[run[0]!]!);
    const buffer = await readBytes(this.handle, start, bytes);
    for (const i of run) {
      const position = positions[i]!;
      const lineStart = this.index.offsetOf(position) - start;
      const event = JSON.parse(buffer.toString('utf8', lineStart, lineStart + this.index.lengthOf(position) - 1)) as E;
      if (remember) this.cache.set(position, event);
      into[i] = event;
    }
  }
}
