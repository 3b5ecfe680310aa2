/**
 * A checkpoint of one log's index, kept beside the log so a restart reads the index instead of
 * parsing every line: the log's tail after `logEnd` is then replayed onto it.
 *
 * The log stays the source of truth. A checkpoint only says "this is the index of the log's first
 * `logEnd` bytes", and the log uses it only after checking that claim (./file-event-log): the file
 * is at least that long and the records at the sampled positions are byte for byte the ones
 * indexed. Anything else (missing, unreadable, torn, another format or text version, another log)
 * means a full replay, never an answer from a wrong index.
 *
 * File layout: MAGIC, a u32 (little-endian) header length, the header as JSON, then each section's
 * bytes, each starting at a multiple of 8 so typed arrays can be read straight into place. The
 * header holds a CRC-32 of all section bytes. Writes go to a temporary file that is fsynced and
 * renamed over the old checkpoint, so a crash leaves the old one or the new one, never a mix.
 */
import { constants } from 'node:fs';
import { open, rename, type FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import type { EventIndexState } from './event-index.js';
import { readBytes, writeBytes } from './log-file.js';

const MAGIC = Buffer.from('EVTIDX01');
const ALIGN = 8;

/** A record whose bytes the checkpoint vouches for: it was indexed from a line with this CRC-32. */
export interface CheckpointSample {
  position: number;
  crc: number;
}

export interface Checkpoint {
  /** Byte length of the log prefix the index covers; it ends on a record boundary. */
  logEnd: number;
  /** Names the function that made the searchable texts, so a changed one is never trusted. */
  textVersion: string;
  samples: CheckpointSample[];
  index: EventIndexState;
}

/** A checkpoint that exists but cannot be used: torn, damaged, or of another format. */
export class UnusableCheckpointError extends Error {
  override name = 'UnusableCheckpointError';
}

type Column = Float64Array | Uint32Array | Int32Array | Uint16Array | Uint8Array;
type ColumnType = 'f64' | 'u32' | 'i32' | 'u16' | 'u8';

const CONSTRUCTORS: Record<ColumnType, new (length: number) => Column> = {
  f64: Float64Array,
  u32: Uint32Array,
  i32: Int32Array,
  u16: Uint16Array,
  u8: Uint8Array,
};

interface SectionHeader {
  name: string;
  type: ColumnType;
  /** Entries stored. */
  length: number;
}

/**
 * How the texts are stored: latin1 when every character fits a byte (it reads back as V8's compact
 * one-byte strings, half the memory and bytes), else UTF-16, which round-trips any string exactly
 * (UTF-8 would replace a lone surrogate).
 */
type TextEncoding = 'latin1' | 'utf16le';

interface Header {
  logEnd: number;
  textEncoding: TextEncoding;
  textVersion: string;
  samples: CheckpointSample[];
  size: number;
  kindNames: string[];
  sourceNames: string[];
  sections: SectionHeader[];
  crc: number;
}

/**
 * The sections, by name: typed arrays read into arrays with room to grow, except those whose
 * length is part of their meaning (the id hash table, the text encoding).
 */
const SPARE_FREE = new Set(['idSlots', 'textLengths', 'textBytes']);

function columnsOf(index: EventIndexState, texts: string, textEncoding: TextEncoding): Record<string, Column> {
  const { positions, blooms } = index.text;
  return {
    offsets: index.offsets,
    lengths: index.lengths,
    times: index.times,
    kinds: index.kinds,
    sources: index.sources,
    textSlots: index.textSlots,
    order: index.order,
    idBytes: index.ids.bytes,
    idEnds: index.ids.ends,
    idHashes: index.ids.hashes,
    idSlots: index.ids.slots,
    textPositions: positions,
    textBlooms: blooms,
    textLengths: Uint32Array.from(index.text.texts, (text) => text.length),
    textBytes: Buffer.from(texts, textEncoding),
  };
}

function typeOf(column: Column): ColumnType {
  if (column instanceof Float64Array) return 'f64';
  if (column instanceof Uint32Array) return 'u32';
  if (column instanceof Int32Array) return 'i32';
  if (column instanceof Uint16Array) return 'u16';
  return 'u8';
}

function bytesOf(column: Column): Buffer {
  return Buffer.from(column.buffer, column.byteOffset, column.byteLength);
}

function aligned(offset: number): number {
  return Math.ceil(offset / ALIGN) * ALIGN;
}

/** Writes `checkpoint` to `file` atomically (temporary file, fsync, rename). */
export async function writeCheckpoint(file: string, checkpoint: Checkpoint): Promise<void> {
  const texts = checkpoint.index.text.texts.join('');
  const textEncoding: TextEncoding = /[^\u0000-\u00ff]/.test(texts) ? 'utf16le' : 'latin1';
  const columns = Object.entries(columnsOf(checkpoint.index, texts, textEncoding));
  let crc = 0;
  for (const [, column] of columns) crc = crc32(bytesOf(column), crc);
  const header: Header = {
    logEnd: checkpoint.logEnd,
    textEncoding,
    textVersion: checkpoint.textVersion,
    samples: checkpoint.samples,
    size: checkpoint.index.size,
    kindNames: checkpoint.index.kindNames,
    sourceNames: checkpoint.index.sourceNames,
    sections: columns.map(([name, column]) => ({ name, type: typeOf(column), length: column.length })),
    crc,
  };
  const headerBytes = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(aligned(MAGIC.length + 4 + headerBytes.length));
  MAGIC.copy(prefix);
  prefix.writeUInt32LE(headerBytes.length, MAGIC.length);
  headerBytes.copy(prefix, MAGIC.length + 4);

  const temporary = `${file}.tmp`;
  const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC);
  try {
    await writeBytes(handle, prefix, 0);
    let offset = prefix.length;
    for (const [, column] of columns) {
      await writeBytes(handle, bytesOf(column), offset);
      offset = aligned(offset + column.byteLength);
    }
    await handle.truncate(offset);
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
}

/** The checkpoint in `file`; undefined when there is none; UnusableCheckpointError when it cannot be trusted. */
export async function readCheckpoint(file: string): Promise<Checkpoint | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return await readFrom(handle);
  } catch (error) {
    if (error instanceof UnusableCheckpointError) throw error;
    throw new UnusableCheckpointError(`cannot read it: ${(error as Error).message}`, { cause: error });
  } finally {
    await handle.close();
  }
}

async function readFrom(handle: FileHandle): Promise<Checkpoint> {
  const { size: fileSize } = await handle.stat();
  if (fileSize < MAGIC.length + 4) throw new UnusableCheckpointError('it is shorter than its header');
  const start = await readBytes(handle, 0, MAGIC.length + 4);
  if (!start.subarray(0, MAGIC.length).equals(MAGIC)) throw new UnusableCheckpointError('it is of another format');
  const headerLength = start.readUInt32LE(MAGIC.length);
  if (MAGIC.length + 4 + headerLength > fileSize) throw new UnusableCheckpointError('its header is torn');
  const header = JSON.parse((await readBytes(handle, MAGIC.length + 4, headerLength)).toString('utf8')) as Header;

  const columns: Record<string, Column> = {};
  const reads: { bytes: Buffer; offset: number }[] = [];
  let offset = aligned(MAGIC.length + 4 + headerLength);
  for (const section of header.sections) {
    const Constructor = CONSTRUCTORS[section.type];
    if (!Constructor || !Number.isSafeInteger(section.length) || section.length < 0) throw new UnusableCheckpointError(`section ${section.name} is malformed`);
    const capacity = SPARE_FREE.has(section.name) ? section.length : Math.max(1024, Math.ceil(section.length * 1.25));
    const column = new Constructor(capacity);
    const bytes = Buffer.from(column.buffer, 0, section.length * column.BYTES_PER_ELEMENT);
    if (offset + bytes.length > fileSize) throw new UnusableCheckpointError('it is torn');
    reads.push({ bytes, offset });
    columns[section.name] = column;
    offset = aligned(offset + bytes.length);
  }
  // All reads at once: filling fresh memory is bound by page faults, which the thread pool takes on
  // every core (a 118 MB checkpoint read in 40 ms instead of 75 on two cores). A failed read leaves
  // none behind: closing the handle waits for its pending reads.
  await Promise.all(reads.map(({ bytes, offset }) => readInto(handle, bytes, offset)));
  let crc = 0;
  for (const { bytes } of reads) crc = crc32(bytes, crc);
  if (crc !== header.crc) throw new UnusableCheckpointError('its contents do not match their checksum');
  return {
    logEnd: header.logEnd,
    textVersion: header.textVersion,
    samples: header.samples,
    index: indexStateFrom(header, columns),
  };
}

async function readInto(handle: FileHandle, into: Buffer, offset: number): Promise<void> {
  for (let done = 0; done < into.length; ) {
    const { bytesRead } = await handle.read(into, done, into.length - done, offset + done);
    if (bytesRead === 0) throw new UnusableCheckpointError('it is torn');
    done += bytesRead;
  }
}

function indexStateFrom(header: Header, columns: Record<string, Column>): EventIndexState {
  const column = <T extends Column>(name: string, type: new (length: number) => T): T => {
    const found = columns[name];
    if (!(found instanceof type)) throw new UnusableCheckpointError(`section ${name} is missing`);
    return found;
  };
  const lengths = column('textLengths', Uint32Array);
  const textBytes = column('textBytes', Uint8Array);
  // One decode, then slices of it: far cheaper than decoding each text on its own.
  if (header.textEncoding !== 'latin1' && header.textEncoding !== 'utf16le') throw new UnusableCheckpointError('its text encoding is unknown');
  const all = Buffer.from(textBytes.buffer, textBytes.byteOffset, textBytes.byteLength).toString(header.textEncoding);
  const texts = new Array<string>(lengths.length);
  let at = 0;
  for (let slot = 0; slot < lengths.length; slot++) {
    texts[slot] = all.slice(at, at + lengths[slot]!);
    at += lengths[slot]!;
  }
  if (at !== all.length) throw new UnusableCheckpointError('its texts do not add up');
  return {
    size: header.size,
    kindNames: header.kindNames,
    sourceNames: header.sourceNames,
    offsets: column('offsets', Float64Array),
    lengths: column('lengths', Uint32Array),
    times: column('times', Float64Array),
    kinds: column('kinds', Uint16Array),
    sources: column('sources', Uint16Array),
    textSlots: column('textSlots', Int32Array),
    order: column('order', Int32Array),
    ids: {
      bytes: column('idBytes', Uint8Array),
      ends: column('idEnds', Float64Array),
      hashes: column('idHashes', Uint32Array),
      slots: column('idSlots', Int32Array),
    },
    text: { texts, positions: column('textPositions', Int32Array), blooms: column('textBlooms', Uint32Array) },
  };
}
