/**
 * A tar archive of directories and regular files, for the engine's "put archive" call. Only what
 * that needs: ustar headers, names under 100 bytes, numeric owners. Small enough to write rather
 * than depend on.
 */
export interface ArchiveFile {
  /** Relative to the directory the archive is extracted into; a directory's ends with "/". */
  name: string;
  /** Absent for a directory. */
  content?: string;
  mode: number;
  uid: number;
  gid: number;
}

const BLOCK = 512;

export function tarArchive(files: readonly ArchiveFile[]): Buffer {
  const parts: Buffer[] = [];
  for (const file of files) {
    const body = Buffer.from(file.content ?? '', 'utf8');
    parts.push(header(file, body.length), body, Buffer.alloc((BLOCK - (body.length % BLOCK)) % BLOCK));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

function header(file: ArchiveFile, size: number): Buffer {
  if (Buffer.byteLength(file.name) >= 100) throw new Error(`tar entry name too long: ${file.name}`);
  const block = Buffer.alloc(BLOCK);
  block.write(file.name, 0, 'utf8');
  writeOctal(block, 100, 8, file.mode);
  writeOctal(block, 108, 8, file.uid);
  writeOctal(block, 116, 8, file.gid);
  writeOctal(block, 124, 12, size);
  writeOctal(block, 136, 12, Math.floor(Date.now() / 1000));
  block.write(file.content === undefined ? '5' : '0', 156, 'ascii');
  block.write('ustar\u000000', 257, 'ascii');
  // The checksum is computed with its own field read as spaces.
  block.fill(' ', 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 'ascii');
  return block;
}

function writeOctal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(`${value.toString(8).padStart(length - 1, '0')}\u0000`, offset, 'ascii');
}
