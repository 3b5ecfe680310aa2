/**
 * The server name a TLS ClientHello asks for (its server_name extension), read without decrypting
 * anything: what the egress proxy judges a TLS connection by when it caught it transparently.
 * `'incomplete'` asks for more bytes; null means the hello names no host (or is not a hello).
 */
export function serverNameOf(data: Buffer): string | null | 'incomplete' {
  // Record header: type 22 (handshake), version, length.
  if (data.length < 5) return 'incomplete';
  if (data[0] !== 0x16) return null;
  const recordEnd = 5 + data.readUInt16BE(3);
  if (data.length < recordEnd) return 'incomplete';
  let at = 5;
  // Handshake header: type 1 (ClientHello), 3-byte length; then version (2) and random (32).
  if (data[at] !== 0x01) return null;
  at += 4 + 2 + 32;
  const skip = (lengthBytes: 1 | 2) => {
    if (at + lengthBytes > recordEnd) return false;
    at += lengthBytes + (lengthBytes === 1 ? (data[at] ?? 0) : data.readUInt16BE(at));
    return at <= recordEnd;
  };
  // Session id, cipher suites, compression methods.
  if (!skip(1) || !skip(2) || !skip(1)) return null;
  if (at + 2 > recordEnd) return null;
  const extensionsEnd = Math.min(recordEnd, at + 2 + data.readUInt16BE(at));
  at += 2;
  while (at + 4 <= extensionsEnd) {
    const type = data.readUInt16BE(at);
    const length = data.readUInt16BE(at + 2);
    at += 4;
    if (type === 0x0000) return firstHostName(data.subarray(at, Math.min(at + length, extensionsEnd)));
    at += length;
  }
  return null;
}

/** The server_name list's first host_name entry (type 0). */
function firstHostName(list: Buffer): string | null {
  let at = 2;
  while (at + 3 <= list.length) {
    const type = list[at];
    const length = list.readUInt16BE(at + 1);
    at += 3;
    if (type === 0 && at + length <= list.length) return list.subarray(at, at + length).toString('ascii').toLowerCase();
    at += length;
  }
  return null;
}
