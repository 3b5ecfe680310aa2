import { constants } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * Complete lines read together. Lines are decoded by their reader one at a time, so a chunk's worth
 * of strings never lives long enough to be promoted by the GC (that doubled load time).
 */
export class LineChunk {
  constructor(
    readonly bytes: Buffer,
    /** Where `bytes` begins in the file. */
    readonly offset: number,
    /** Index in `bytes` of each line's newline; a line starts after the previous one. */
    readonly newlines: number[],
  ) {}

  /** Calls `visit` with each line's text (newline excluded), file offset and length (newline included). */
  forEachLine(visit: (text: string, offset: number, length: number) => void): void {
    let start = 0;
    for (const newline of this.newlines) {
      visit(this.bytes.toString('utf8', start, newline), this.offset + start, newline + 1 - start);
      start = newline + 1;
    }
  }
}

const NEWLINE = 0x0a;
const CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * Opens the log file for reading and appending, creating it (0600: events carry what the agent saw)
 * and its directories when missing. New directory entries are fsynced too: otherwise a power loss
 * could lose the file with its first events.
 */
export async function openLogFile(file: string): Promise<FileHandle> {
  const path = resolve(file);
  const directory = dirname(path);
  const firstCreated = await mkdir(directory, { recursive: true });
  try {
    return await open(path, constants.O_RDWR);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const handle = await open(path, constants.O_RDWR | constants.O_CREAT, 0o600);
  await syncDirectory(directory);
  if (firstCreated !== undefined) {
    for (let created = directory; ; created = dirname(created)) {
      await syncDirectory(dirname(created));
      if (created === firstCreated) break;
    }
  }
  return handle;
}

export async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The complete lines of bytes [start, end), a chunk at a time so a large log never sits in memory
 * whole. Bytes after the last newline (a torn tail) are not yielded. NDJSON escapes newlines inside
 * strings and UTF-8 never uses 0x0a inside a character, so every 0x0a ends a record.
 *
 * One buffer is reused for every chunk (a partial last line moves to its front before the next
 * read): allocating a fresh 4 MB per chunk left hundreds of MB of freed-but-retained RSS behind a
 * large load. So a chunk is only valid until the next one is asked for.
 */
export async function* readLines(handle: FileHandle, start: number, end: number): AsyncGenerator<LineChunk> {
  let buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(1, end - start)));
  let kept = 0;
  let bufferOffset = start;
  for (let position = start; position < end; ) {
    if (kept === buffer.length) {
      const larger = Buffer.allocUnsafe(buffer.length * 2);
      buffer.copy(larger, 0, 0, kept);
      buffer = larger;
    }
    const { bytesRead } = await handle.read(buffer, kept, Math.min(buffer.length - kept, end - position), position);
    if (bytesRead === 0) return;
    position += bytesRead;
    const filled = kept + bytesRead;
    const bytes = buffer.subarray(0, filled);
    const newlines: number[] = [];
    for (let newline = bytes.indexOf(NEWLINE, kept); newline !== -1; newline = bytes.indexOf(NEWLINE, newline + 1)) {
      newlines.push(newline);
    }
    yield new LineChunk(bytes, bufferOffset, newlines);
    const consumed = newlines.length === 0 ? 0 : newlines[newlines.length - 1]! + 1;
    buffer.copy(buffer, 0, consumed, filled);
    kept = filled - consumed;
    bufferOffset += consumed;
  }
}

export async function readBytes(handle: FileHandle, offset: number, length: number): Promise<Buffer> {
  return readInto(handle, Buffer.allocUnsafe(length), offset, length);
}

/** Reads bytes [offset, offset + length) of the file into the start of `buffer`, and returns it. */
export async function readInto(handle: FileHandle, buffer: Buffer, offset: number, length: number): Promise<Buffer> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, offset + done);
    if (bytesRead === 0) throw new Error(`Event log ended at byte ${offset + done}, expected ${offset + length}`);
    done += bytesRead;
  }
  return buffer;
}

export async function writeBytes(handle: FileHandle, bytes: Buffer, offset: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, offset + done);
    done += bytesWritten;
  }
}
