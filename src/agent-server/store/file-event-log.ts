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
 * - A group holding a batch of several events is written between the two states of a commit marker
 *   (./batch-marker): at open, a group the marker shows unfinished is cut off whole, so a crash
 *   never leaves part of a batch behind, even as complete lines.
 * - A crash can only tear the last write, so at open unreadable lines at the end of the file are
 *   cut off (truncate + fsync). An unreadable line followed by readable ones is not a torn tail but
 *   outside damage: opening fails rather than dropping acknowledged events.
 * - A failed write or fsync leaves the file's tail unknown: the log then refuses further appends
 *   until it is reopened, which repairs the tail. Retrying an fsync after a failure can report
 *   success for data the kernel already dropped.
 * - Events handed out are parsed from the stored line (a cached copy may be handed out more than
 *   once): callers treat them as read-only.
 * - The index may start from a checkpoint (./checkpoint, in `<file>.checkpoint`) instead of a replay
 *   of the whole file, and the file's tail after it is replayed onto it. The log stays the source of
 *   truth: a checkpoint is used only when the file still holds, byte for byte, the records it
 *   sampled, and its text version is ours; otherwise (missing, torn, stale beyond the file's end,
 *   of another log) the whole file is replayed. A checkpoint is written in the background once the
 *   tail it does not cover reaches `checkpointBytes`, and at close; it never holds up an append.
 */
import type { FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { logger } from '../../logger.js';
import { timestampMillis } from '../../events/timestamp.js';
import { readCheckpoint, UnusableCheckpointError, writeCheckpoint, type Checkpoint, type CheckpointSample } from './checkpoint.js';
import { CorruptEventLogError, DuplicateEventIdError, EventLogUnavailableError, type DuplicateEventId, UnknownPageIdError } from './errors.js';
import { BatchMarker } from './batch-marker.js';
import { EventIndex, type IndexedRecord } from './event-index.js';
import type { EventFilter, EventLog, EventLogPage, EventQuery, StoredEvent } from './event-log.js';
import { openLogFile, readBytes, readInto, readLines, writeBytes } from './log-file.js';
import { RUN_BYTES, releaseReadBuffer, takeReadBuffer } from './read-buffers.js';
import { RecordCache } from './record-cache.js';

export interface EventLogOptions {
  /** The text a `body` filter searches; null when the event must never match one. */
  searchableText?: (event: StoredEvent) => string | null;
  /**
   * Names what `searchableText` returns; change it whenever that changes, so checkpoints holding the
   * old texts are replayed rather than trusted.
   */
  textVersion?: string;
  /** How many parsed events to keep in memory for repeated reads. */
  cacheSize?: number;
  /** Log bytes not covered by the checkpoint past which a new checkpoint is written. */
  checkpointBytes?: number;
}

const DEFAULT_CACHE_SIZE = 1000;
const DEFAULT_CHECKPOINT_BYTES = 32 * 1024 * 1024;
/** At close a smaller uncovered tail is worth a checkpoint: the next start is then a pure read. */
const CLOSE_CHECKPOINT_BYTES = 1024 * 1024;
/** Records a checkpoint is checked against, spread evenly from the first to the last. */
const CHECKPOINT_SAMPLES = 64;
/** Unwanted bytes a read may span to join two records: one read beats two below this. */
const READ_GAP_BYTES = 64 * 1024;

interface LogSettings {
  file: string;
  searchableText: (event: StoredEvent) => string | null;
  textVersion: string;
  checkpointBytes: number;
}

export async function openEventLog<E extends StoredEvent>(file: string, options: EventLogOptions = {}): Promise<EventLog<E>> {
  const settings: LogSettings = {
    file,
    searchableText: options.searchableText ?? (() => null),
    textVersion: options.textVersion ?? '',
    checkpointBytes: options.checkpointBytes ?? DEFAULT_CHECKPOINT_BYTES,
  };
  const handle = await openLogFile(file);
  let marker: BatchMarker | undefined;
  try {
    // First, so that neither the checkpoint nor the replay sees a batch that never finished.
    marker = await BatchMarker.existing(file);
    if (marker) await dropUnfinishedGroup(handle, file, marker);
    const restored = await restoreCheckpoint(handle, settings);
    const index = restored?.index ?? new EventIndex();
    const checkpointEnd = restored?.logEnd ?? 0;
    const end = await loadLog(handle, file, index, settings.searchableText, checkpointEnd);
    if (end > 0) logger.info({ file, events: index.size, checkpointedBytes: checkpointEnd, replayedBytes: end - checkpointEnd }, 'event log: opened');
    return new FileEventLog<E>(settings, handle, marker, index, end, checkpointEnd, options.cacheSize ?? DEFAULT_CACHE_SIZE);
  } catch (error) {
    await marker?.close();
    await handle.close();
    throw error;
  }
}

function checkpointFile(file: string): string {
  return `${file}.checkpoint`;
}

/** The index of the checkpoint beside the log when the log still holds what it indexed; otherwise undefined. */
async function restoreCheckpoint(handle: FileHandle, settings: LogSettings): Promise<{ index: EventIndex; logEnd: number } | undefined> {
  const file = checkpointFile(settings.file);
  let checkpoint: Checkpoint | undefined;
  try {
    checkpoint = await readCheckpoint(file);
  } catch (error) {
    if (!(error instanceof UnusableCheckpointError)) throw error;
    logger.warn({ file, reason: error.message }, 'event log: replaying the whole log, its checkpoint is unusable');
    return undefined;
  }
  if (!checkpoint) return undefined;
  let index: EventIndex;
  try {
    index = new EventIndex(checkpoint.index);
  } catch (error) {
    logger.warn({ file, reason: (error as Error).message }, 'event log: replaying the whole log, its checkpoint is unusable');
    return undefined;
  }
  const mismatch = await checkpointMismatch(handle, settings, checkpoint, index);
  if (mismatch !== undefined) {
    logger.warn({ file, reason: mismatch }, 'event log: replaying the whole log, its checkpoint does not match it');
    return undefined;
  }
  return { index, logEnd: checkpoint.logEnd };
}

/** Why the log does not hold what the checkpoint indexed, or undefined when it does. */
async function checkpointMismatch(handle: FileHandle, settings: LogSettings, checkpoint: Checkpoint, index: EventIndex): Promise<string | undefined> {
  if (checkpoint.textVersion !== settings.textVersion) return `its text version is ${JSON.stringify(checkpoint.textVersion)}`;
  const { size } = await handle.stat();
  if (checkpoint.logEnd > size) return `it covers ${checkpoint.logEnd} bytes, the log has ${size}`;
  const expected = samplePositions(index.size);
  const samples = new Map(checkpoint.samples.map((sample) => [sample.position, sample.crc]));
  if (expected.some((position) => !samples.has(position))) return 'it lacks samples';
  for (const position of expected) {
    const offset = index.offsetOf(position);
    const length = index.lengthOf(position);
    if (offset + length > checkpoint.logEnd) return `record ${position} lies past its end`;
    const line = await readBytes(handle, offset, length);
    if (crc32(line) !== samples.get(position)) return `record ${position} differs`;
    const event = parseEvent(line.toString('utf8', 0, length - 1));
    const text = event && settings.searchableText(event);
    if (!event || (text?.toLowerCase() ?? null) !== index.textOf(position)) return `record ${position} has other text`;
  }
  return undefined;
}

/** The positions a checkpoint of `size` records samples: evenly spread, first and last included. */
function samplePositions(size: number): number[] {
  if (size === 0) return [];
  const count = Math.min(size, CHECKPOINT_SAMPLES);
  return [...new Set(Array.from({ length: count }, (_, i) => Math.round((i * (size - 1)) / Math.max(1, count - 1))))];
}

/** Cuts the log back to where an unfinished multi-event group began, and closes the marker. */
async function dropUnfinishedGroup(handle: FileHandle, file: string, marker: BatchMarker): Promise<void> {
  const start = await marker.openAt();
  if (start === undefined) return;
  const { size } = await handle.stat();
  if (size > start) {
    await handle.truncate(start);
    await handle.datasync();
  }
  await marker.end();
  logger.warn({ file, keptBytes: Math.min(start, size), cutBytes: Math.max(0, size - start) }, 'event log: dropped a batch a crash left unfinished');
}

/** Indexes every readable line from `start`, cuts a torn tail, and returns the end of the last record. */
async function loadLog(
  handle: FileHandle,
  file: string,
  index: EventIndex,
  searchableText: (event: StoredEvent) => string | null,
  start: number,
): Promise<number> {
  const { size } = await handle.stat();
  let end = start;
  let firstUnreadable: number | undefined;
  for await (const chunk of readLines(handle, start, size)) {
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
  private readonly file: string;
  private readonly searchableText: (event: StoredEvent) => string | null;
  /** The checkpoint being written, if any: one at a time. */
  private checkpointing: Promise<void> | undefined;
  readonly recovery: { checkpointedBytes: number; replayedBytes: number };

  constructor(
    private readonly settings: LogSettings,
    private readonly handle: FileHandle,
    private marker: BatchMarker | undefined,
    private readonly index: EventIndex,
    private end: number,
    /** The log bytes the latest checkpoint covers. */
    private checkpointEnd: number,
    cacheSize: number,
  ) {
    this.file = settings.file;
    this.searchableText = settings.searchableText;
    this.cache = new RecordCache(cacheSize);
    this.recovery = { checkpointedBytes: checkpointEnd, replayedBytes: end - checkpointEnd };
    this.checkpointIfBehind(settings.checkpointBytes);
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

  async readLines(from: number, to: number): Promise<string[]> {
    const start = Math.max(0, Math.ceil(from));
    const stop = Math.min(this.index.size, Math.floor(to));
    if (stop <= start) return [];
    const first = this.index.offsetOf(start);
    const buffer = await readBytes(this.handle, first, this.index.offsetOf(stop - 1) + this.index.lengthOf(stop - 1) - first);
    const lines: string[] = [];
    for (let position = start; position < stop; position++) {
      const lineStart = this.index.offsetOf(position) - first;
      lines.push(buffer.toString('utf8', lineStart, lineStart + this.index.lengthOf(position) - 1));
    }
    return lines;
  }

  async search(query: EventQuery): Promise<EventLogPage<E>> {
    if (!Number.isInteger(query.limit) || query.limit < 1) throw new RangeError(`limit must be a positive integer, got ${query.limit}`);
    let from: number | undefined;
    if (query.pageId !== undefined) {
      from = this.index.positionOf(query.pageId);
      if (from === undefined) throw new UnknownPageIdError(query.pageId);
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
      await this.checkpointing;
      this.checkpointIfBehind(Math.min(this.settings.checkpointBytes, CLOSE_CHECKPOINT_BYTES));
      await this.checkpointing;
      await this.marker?.close();
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
        await this.commit(
          group.flatMap((batch) => batch.events),
          group.some((batch) => batch.events.length > 1),
        );
      } catch (error) {
        this.failure = new EventLogUnavailableError(this.file, 'failed a write; reopen it to repair its tail', { cause: error });
        await this.handle.truncate(this.end).catch(() => undefined);
        this.settle(group, error);
        continue;
      }
      this.notify();
      this.settle(group);
      this.checkpointIfBehind(this.settings.checkpointBytes);
    }
    this.flushing = undefined;
  }

  /** Starts writing a checkpoint in the background when the uncovered tail has reached `bytes`. */
  private checkpointIfBehind(bytes: number): void {
    if (this.checkpointing || this.end - this.checkpointEnd < bytes || this.end === this.checkpointEnd) return;
    this.checkpointing = this.writeCheckpoint()
      .catch((error: unknown) => logger.warn({ err: error, file: this.file }, 'event log: writing a checkpoint failed'))
      .finally(() => {
        this.checkpointing = undefined;
        if (!this.closed) this.checkpointIfBehind(this.settings.checkpointBytes);
      });
  }

  /** Takes the index as it is now (a durable prefix of the log) and writes it beside the log. */
  private async writeCheckpoint(): Promise<void> {
    const index = this.index.state();
    const logEnd = this.end;
    const samples: CheckpointSample[] = [];
    for (const position of samplePositions(index.size)) {
      const line = await readBytes(this.handle, index.offsets[position]!, index.lengths[position]!);
      samples.push({ position, crc: crc32(line) });
    }
    await writeCheckpoint(checkpointFile(this.file), { logEnd, textVersion: this.settings.textVersion, samples, index });
    this.checkpointEnd = logEnd;
  }

  /** Writes a group; `guarded` (it holds a multi-event batch) brackets the write with the marker. */
  private async commit(events: PreparedEvent<E>[], guarded: boolean): Promise<void> {
    const bytes = Buffer.concat(events.map((event) => event.line));
    if (guarded) {
      this.marker ??= await BatchMarker.open(this.file);
      await this.marker.begin(this.end);
    }
    await writeBytes(this.handle, bytes, this.end);
    await this.handle.datasync();
    if (guarded) await this.marker!.end();
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

  /**
   * Events at the given positions, in that order. Uncached records lying close together are read
   * with one read spanning them (a page of `source=user` is ~100 records a few KiB apart: one read
   * of a few hundred KiB costs far less than a hundred reads through the thread pool).
   */
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
      const start = this.index.offsetOf(positions[missing[runStart]!]!);
      let end = start + this.index.lengthOf(positions[missing[runStart]!]!);
      let runEnd = runStart + 1;
      while (runEnd < missing.length) {
        const position = positions[missing[runEnd]!]!;
        const recordStart = this.index.offsetOf(position);
        const recordEnd = Math.max(end, recordStart + this.index.lengthOf(position));
        if (recordStart - end > READ_GAP_BYTES || recordEnd - start > RUN_BYTES) break;
        end = recordEnd;
        runEnd++;
      }
      reads.push(this.readRun(positions, missing.slice(runStart, runEnd), start, end - start, events, remember));
      runStart = runEnd;
    }
    await Promise.all(reads);
    return events;
  }

  /** Reads one run of nearby positions (given as indexes into `positions`) with one read of [start, start + bytes). */
  private async readRun(positions: readonly number[], run: number[], start: number, bytes: number, into: E[], remember: boolean): Promise<void> {
    const buffer = takeReadBuffer(bytes);
    try {
      await readInto(this.handle, buffer, start, bytes);
      for (const i of run) {
        const position = positions[i]!;
        const lineStart = this.index.offsetOf(position) - start;
        const event = JSON.parse(buffer.toString('utf8', lineStart, lineStart + this.index.lengthOf(position) - 1)) as E;
        if (remember) this.cache.set(position, event);
        into[i] = event;
      }
    } finally {
      releaseReadBuffer(buffer);
    }
  }
}
