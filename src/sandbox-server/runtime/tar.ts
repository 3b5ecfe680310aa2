/** One entry of a tar archive: a directory, or a file with its content; owned by root. */
export interface TarEntry {
  /** Relative path, a directory's ending in "/". */
  path: string;
  mode: number;
  content?: Buffer;
}

const BLOCK = 512;

/** A ustar archive of `entries`, root-owned, as `docker cp` (PUT /containers/{id}/archive) takes it. */
export function tarOf(entries: readonly TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const content = entry.content ?? Buffer.alloc(0);
    blocks.push(headerOf(entry, content.length), content, Buffer.alloc((BLOCK - (content.length % BLOCK)) % BLOCK));
  }
  blocks.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(blocks);
}

function headerOf(entry: TarEntry, size: number): Buffer {
  if (Buffer.byteLength(entry.path) > 100) throw new Error(`tar path too long: ${entry.path}`);
  const header = Buffer.alloc(BLOCK);
  const octal = (value: number, length: number) => `${value.toString(8).padStart(length - 1, '0')}\0`;
  header.write(entry.path, 0);
  header.write(octal(entry.mode, 8), 100);
  header.write(octal(0, 8), 108);
  header.write(octal(0, 8), 116);
  header.write(octal(size, 12), 124);
  header.write(octal(Math.floor(Date.now() / 1000), 12), 136);
  header.write(' '.repeat(8), 148);
  header.write(entry.path.endsWith('/') ? '5' : '0', 156);
  header.write('ustar\0', 257);
  header.write('00', 263);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return header;
}
