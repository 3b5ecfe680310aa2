/**
 * The commit marker that makes a batch of several events all-or-nothing across a crash. A crash
 * (SIGKILL included: the kernel may stop a large write part way) can leave the first lines of a
 * batch complete on disk and the rest missing; those complete lines look like any others.
 *
 * So before a group holding a multi-event batch is written, `<log>.batch` records "open at byte
 * N" (the log's end) and is made durable; once the group is written and fsynced, it records
 * "closed". At open, an open marker means the group never finished: the log is cut back to N,
 * dropping every line of it, before anything is indexed. Nothing of such a group was acknowledged,
 * since appends resolve only after the marker is closed.
 *
 * The record is one fixed-size write at offset 0 (a fraction of a disk sector and of a page), so a
 * crash leaves either the old or the new record, never a mix.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncDirectory, writeBytes } from './log-file.js';

const RECORD_BYTES = 64;
const CLOSED = -1;

export class BatchMarker {
  private constructor(
    readonly file: string,
    private readonly handle: FileHandle,
  ) {}

  /** The marker of `logFile`, or undefined when it has none (it never wrote a multi-event batch). */
  static async existing(logFile: string): Promise<BatchMarker | undefined> {
    const file = markerFileOf(logFile);
    try {
      return new BatchMarker(file, await open(file, constants.O_RDWR));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return undefined;
    }
  }

  /** Opens the marker of `logFile`, creating it (its directory entry made durable) when missing. */
  static async open(logFile: string): Promise<BatchMarker> {
    const existing = await BatchMarker.existing(logFile);
    if (existing) return existing;
    const file = markerFileOf(logFile);
    const handle = await open(file, constants.O_RDWR | constants.O_CREAT, 0o600);
    const marker = new BatchMarker(file, handle);
    await marker.write(CLOSED);
    await syncDirectory(dirname(file));
    return marker;
  }

  /** The log offset of an unfinished group, or undefined when the last group finished. */
  async openAt(): Promise<number | undefined> {
    const buffer = Buffer.alloc(RECORD_BYTES);
    const { bytesRead } = await this.handle.read(buffer, 0, RECORD_BYTES, 0);
    const match = /^\{"open":(-?\d+)\}/.exec(buffer.toString('utf8', 0, bytesRead));
    const offset = match ? Number(match[1]) : CLOSED;
    return offset === CLOSED ? undefined : offset;
  }

  /** Durably records that a group starting at log byte `offset` is being written. */
  begin(offset: number): Promise<void> {
    return this.write(offset);
  }

  /** Durably records that the group finished (it is in the log and fsynced). */
  end(): Promise<void> {
    return this.write(CLOSED);
  }

  close(): Promise<void> {
    return this.handle.close();
  }

  private async write(offset: number): Promise<void> {
    const record = Buffer.alloc(RECORD_BYTES, 0x20);
    record.write(`{"open":${offset}}`);
    record[RECORD_BYTES - 1] = 0x0a;
    await writeBytes(this.handle, record, 0);
    await this.handle.datasync();
  }
}

export function markerFileOf(logFile: string): string {
  return `${logFile}.batch`;
}
