/**
 * The little of the DNS wire format (RFC 1035) the egress resolver needs: a query's id, flags and
 * first question, and an answer of A records or a bare response code.
 */

export const DNS_TYPE_A = 1;
export const RCODE = { noError: 0, formErr: 1, serverFail: 2, nxDomain: 3, refused: 5 } as const;

export interface DnsQuestion {
  id: number;
  /** The query's flags word (its RD bit is echoed). */
  flags: number;
  /** Lower case, without the trailing dot. */
  name: string;
  type: number;
  /** The question's bytes as asked (name, type, class), echoed in the answer. */
  raw: Buffer;
}

/** The first question of a query; undefined for anything that is not a well-formed query. */
export function parseQuery(message: Buffer): DnsQuestion | undefined {
  if (message.length < 12) return undefined;
  const flags = message.readUInt16BE(2);
  // QR set means a response; opcode other than 0 is not a standard query.
  if (flags & 0x8000 || (flags >> 11) & 0xf || message.readUInt16BE(4) < 1) return undefined;
  const labels: string[] = [];
  let at = 12;
  for (;;) {
    const length = message[at];
    if (length === undefined || length > 63) return undefined;
    at += 1;
    if (length === 0) break;
    if (at + length > message.length) return undefined;
    labels.push(message.subarray(at, at + length).toString('latin1').toLowerCase());
    at += length;
  }
  if (at + 4 > message.length) return undefined;
  return { id: message.readUInt16BE(0), flags, name: labels.join('.'), type: message.readUInt16BE(at), raw: message.subarray(12, at + 4) };
}

/** The answer to `question`: `rcode`, and an A record per address (for a NOERROR answer to an A question). */
export function buildAnswer(question: DnsQuestion, rcode: number, addresses: readonly string[] = [], ttlSeconds = 5): Buffer {
  const records = rcode === RCODE.noError && question.type === DNS_TYPE_A ? addresses : [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(question.id, 0);
  // QR, the query's RD, RA; AA since we are the authority on what a sandbox may resolve.
  header.writeUInt16BE(0x8000 | 0x0400 | (question.flags & 0x0100) | 0x0080 | rcode, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  const answers = records.map((address) => {
    const record = Buffer.alloc(16);
    // A pointer to the question's name at offset 12.
    record.writeUInt16BE(0xc00c, 0);
    record.writeUInt16BE(DNS_TYPE_A, 2);
    record.writeUInt16BE(1, 4);
    record.writeUInt32BE(ttlSeconds, 6);
    record.writeUInt16BE(4, 10);
    address.split('.').forEach((octet, index) => record.writeUInt8(Number(octet), 12 + index));
    return record;
  });
  return Buffer.concat([header, question.raw, ...answers]);
}

/** A bare error answer to a message too broken to echo a question: its id only. */
export function buildFormatError(message: Buffer): Buffer {
  const header = Buffer.alloc(12);
  if (message.length >= 2) header.writeUInt16BE(message.readUInt16BE(0), 0);
  header.writeUInt16BE(0x8000 | RCODE.formErr, 2);
  return header;
}
