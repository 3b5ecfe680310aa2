/**
 * A minimal ZIP writer (PKWARE APPNOTE 6.3: local headers, deflated data, central directory, end
 * record) for the small archives we hand out: no ZIP64, so each file and the whole archive stay
 * under 4 GiB, which the caller checks. Names are UTF-8 (general purpose flag bit 11).
 */
import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipEntry {
  /** Path inside the archive, with forward slashes. */
  name: string;
  data: Buffer;
  modified: Date;
}

const ZIP32_LIMIT = 0xffff_ffff;
const UTF8_NAMES = 0x0800;
const DEFLATE = 8;
const VERSION = 20;

/** MS-DOS date and time, the only timestamps the base format carries (two-second precision). */
function dosDateTime(date: Date): { time: number; date: number } {
  const year = Math.max(1980, date.getFullYear());
  return {
    time: (date.getHours() << 11) | (date.getMinutes() << 5) | Math.floor(date.getSeconds() / 2),
    date: ((year - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate(),
  };
}

/** The fields a local header and its central directory record share, in the same order in both. */
interface EntryFields {
  time: number;
  date: number;
  checksum: number;
  compressedSize: number;
  size: number;
  nameLength: number;
}

/** Writes the shared run from "version needed" to "file name length", starting at `at`. */
function writeEntryFields(buffer: Buffer, at: number, fields: EntryFields): void {
  buffer.writeUInt16LE(VERSION, at);
  buffer.writeUInt16LE(UTF8_NAMES, at + 2);
  buffer.writeUInt16LE(DEFLATE, at + 4);
  buffer.writeUInt16LE(fields.time, at + 6);
  buffer.writeUInt16LE(fields.date, at + 8);
  buffer.writeUInt32LE(fields.checksum, at + 10);
  buffer.writeUInt32LE(fields.compressedSize, at + 14);
  buffer.writeUInt32LE(fields.size, at + 18);
  buffer.writeUInt16LE(fields.nameLength, at + 22);
}

export function zipArchive(entries: readonly ZipEntry[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const compressed = deflateRawSync(entry.data);
    const checksum = crc32(entry.data);
    const { time, date } = dosDateTime(entry.modified);
    if (entry.data.length > ZIP32_LIMIT || offset > ZIP32_LIMIT) throw new RangeError('archive too large for ZIP32');

    const fields: EntryFields = { time, date, checksum, compressedSize: compressed.length, size: entry.data.length, nameLength: name.length };

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    writeEntryFields(local, 4, fields);

    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE(VERSION, 4);
    writeEntryFields(header, 6, fields);
    header.writeUInt32LE(offset, 42);
    central.push(header, name);

    parts.push(local, name, compressed);
    offset += local.length + name.length + compressed.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, directory, end]);
}
