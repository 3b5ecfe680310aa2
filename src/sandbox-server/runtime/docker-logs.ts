/**
 * A container without a TTY sends its logs as frames: one byte naming the stream, three zero
 * bytes, a big-endian 32-bit length, then that many bytes. The text is what the frames carry.
 */
export function demultiplexLogs(output: Buffer): string {
  const chunks: Buffer[] = [];
  let offset = 0;
  while (offset + 8 <= output.length) {
    const length = output.readUInt32BE(offset + 4);
    chunks.push(output.subarray(offset + 8, offset + 8 + length));
    offset += 8 + length;
  }
  return Buffer.concat(chunks).toString('utf8');
}
