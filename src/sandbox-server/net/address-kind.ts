/**
 * What kind of address an IP is: the public internet, or one of the ranges a request made on a
 * caller's behalf (a webhook, an engine's published ports) must not reach unasked. Pure.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

export type AddressKind =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'link-local'
  | 'private'
  | 'shared'
  | 'unique-local'
  | 'multicast'
  | 'reserved';

/** Everything that is not the public internet, by kind; the first match names it. */
const RANGES: readonly [AddressKind, 'ipv4' | 'ipv6', string, number][] = [
  ['unspecified', 'ipv4', '0.0.0.0', 8],
  ['loopback', 'ipv4', '127.0.0.0', 8],
  ['link-local', 'ipv4', '169.254.0.0', 16],
  ['private', 'ipv4', '10.0.0.0', 8],
  ['private', 'ipv4', '172.16.0.0', 12],
  ['private', 'ipv4', '192.168.0.0', 16],
  ['shared', 'ipv4', '100.64.0.0', 10],
  ['reserved', 'ipv4', '192.0.0.0', 24],
  ['reserved', 'ipv4', '192.0.2.0', 24],
  ['reserved', 'ipv4', '198.18.0.0', 15],
  ['reserved', 'ipv4', '198.51.100.0', 24],
  ['reserved', 'ipv4', '203.0.113.0', 24],
  ['multicast', 'ipv4', '224.0.0.0', 4],
  ['reserved', 'ipv4', '240.0.0.0', 4],
  ['unspecified', 'ipv6', '::', 128],
  ['loopback', 'ipv6', '::1', 128],
  ['link-local', 'ipv6', 'fe80::', 10],
  ['reserved', 'ipv6', 'fec0::', 10],
  ['unique-local', 'ipv6', 'fc00::', 7],
  ['multicast', 'ipv6', 'ff00::', 8],
  ['reserved', 'ipv6', '2001:db8::', 32],
  ['reserved', 'ipv6', '2001::', 32],
  ['reserved', 'ipv6', '100::', 64],
  ['reserved', 'ipv6', '::', 96],
];

const LISTS = RANGES.map(([kind, family, network, prefix]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { kind, family, list };
});

/** The kind of `ip` (IPv4, or IPv6 without brackets); an IPv4 address inside IPv6 is judged as itself. */
export function addressKind(ip: string): AddressKind {
  if (isIPv4(ip)) return kindOf(ip, 'ipv4');
  if (!isIPv6(ip)) throw new Error(`${ip} is not an IP address`);
  const embedded = embeddedIPv4(ip);
  if (embedded !== undefined) return kindOf(embedded, 'ipv4');
  return kindOf(ip, 'ipv6');
}

function kindOf(ip: string, family: 'ipv4' | 'ipv6'): AddressKind {
  return LISTS.find((range) => range.family === family && range.list.check(ip, family))?.kind ?? 'public';
}

/**
 * The IPv4 address an IPv6 one carries, where the network would deliver it there: mapped
 * (::ffff:0:0/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */
function embeddedIPv4(ip: string): string | undefined {
  const words = ipv6Words(ip);
  const [w0, w1, w2, w3, w4, w5, w6, w7] = words;
  const dotted = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  if (w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0xffff) return dotted(w6, w7);
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) return dotted(w6, w7);
  if (w0 === 0x2002) return dotted(w1, w2);
  return undefined;
}

/** The eight 16-bit words of a valid IPv6 address, a trailing dotted IPv4 part included. */
function ipv6Words(ip: string): [number, number, number, number, number, number, number, number] {
  let text = ip.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((word) => parseInt(word, 16)));
  const first = parse(head);
  const last = tail === undefined ? [] : parse(tail);
  const words = [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last];
  return words as [number, number, number, number, number, number, number, number];
}
