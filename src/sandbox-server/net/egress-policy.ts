import { isIP } from 'node:net';
import { parseCidr, type Ipv4Block } from '../runtime/sandbox-network.js';

/**
 * The words of an `allowlist` sandbox's egress policy, and the one decision every enforcer makes
 * with them (the proxy on a name, the resolver on a question, the packet rules on an address).
 *
 * An entry is one of:
 * - a name: `github.com` (that name only) or `*.pypi.org` (any name below pypi.org, not pypi.org
 *   itself), optionally with `:port`; names are reached through the control plane's egress proxy;
 * - an IPv4 address or CIDR block, optionally with `:port` (`10.1.2.3:5432`, `10.0.0.0/8`);
 *   these go to the packet filter (and the proxy honours them for an address it is asked for);
 * - `host.sandbox.internal:PORT`: a service on the host, one port at a time.
 * Deny entries win over allow entries; anything neither allows is denied.
 */

/** The name a sandbox reaches the host by, and only on the ports its policy names. */
export const HOST_NAME = 'host.sandbox.internal';
/** The name an `allowlist` sandbox reaches the egress proxy by (its HTTP_PROXY), always answered. */
export const PROXY_NAME = 'proxy.sandbox.internal';
/** Most entries a list may hold: each is a packet rule or a comparison on every connection. */
export const MAX_EGRESS_ENTRIES = 256;

export type EgressEntry =
  | { kind: 'name'; name: string; wildcard: boolean; port: number | null }
  | { kind: 'cidr'; block: Ipv4Block; cidr: string; port: number | null };

export interface EgressRules {
  allow: readonly EgressEntry[];
  deny: readonly EgressEntry[];
}

/** The lists as the API and the database hold them: entry strings. */
export interface EgressLists {
  allow: string[];
  deny: string[];
}

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** One entry, normalized; a string saying why not when it is none of the kinds above. */
export function parseEgressEntry(text: string): EgressEntry | string {
  const entry = text.trim().toLowerCase();
  if (entry === '') return 'must not be empty';
  const split = splitPort(entry);
  if (typeof split === 'string') return split;
  const { host, port } = split;
  if (host.includes('/') || isIP(host) !== 0) {
    if (host.includes(':')) return 'IPv6 entries are not supported: sandbox networks are IPv4 only';
    const cidr = host.includes('/') ? host : `${host}/32`;
    const block = parseCidr(cidr);
    if (!block || !/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(cidr)) return 'must be an IPv4 address or CIDR block such as 10.0.0.0/8';
    return { kind: 'cidr', block, cidr: `${formatBlock(block)}`, port };
  }
  const wildcard = host.startsWith('*.');
  const name = (wildcard ? host.slice(2) : host).replace(/\.$/, '');
  if (name.length > 253 || !name.includes('.') || !name.split('.').every((label) => LABEL.test(label)) || /^\d+$/.test(name.split('.').at(-1) ?? '')) {
    return 'must be a domain name (a wildcard only as a leading "*."), an IPv4 address or CIDR, each with an optional :port';
  }
  if (name === HOST_NAME && (wildcard || port === null)) return `${HOST_NAME} needs a port: the host is opened one port at a time`;
  return { kind: 'name', name, wildcard, port };
}

function splitPort(entry: string): { host: string; port: number | null } | string {
  const match = /^(.*?)(?::(\d{1,5}))?$/.exec(entry);
  const host = match?.[1] ?? entry;
  if (match?.[2] === undefined) return { host: entry, port: null };
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) return 'port must be 1 to 65535';
  return { host, port };
}

function formatBlock(block: Ipv4Block): string {
  const octets = [24, 16, 8, 0].map((shift) => Math.floor(block.base / 2 ** shift) % 256);
  return `${octets.join('.')}/${block.prefix}`;
}

/** The parsed rules of valid lists (the API validated them; an entry that no longer parses is dropped). */
export function egressRulesOf(lists: EgressLists): EgressRules {
  const parse = (entries: readonly string[]) => entries.map(parseEgressEntry).filter((entry): entry is EgressEntry => typeof entry !== 'string');
  return { allow: parse(lists.allow), deny: parse(lists.deny) };
}

/** Valid lists as stored and answered: each entry in its normal form, duplicates dropped. */
export function normalizeEgressLists(lists: EgressLists): EgressLists {
  const rules = egressRulesOf(lists);
  const normal = (entries: readonly EgressEntry[]) => [...new Set(entries.map(formatEgressEntry))];
  return { allow: normal(rules.allow), deny: normal(rules.deny) };
}

/** The entry as written back: `*.pypi.org`, `10.0.0.0/8:443`. */
export function formatEgressEntry(entry: EgressEntry): string {
  const host = entry.kind === 'name' ? `${entry.wildcard ? '*.' : ''}${entry.name}` : entry.cidr.replace(/\/32$/, '');
  return entry.port === null ? host : `${host}:${entry.port}`;
}

/** Whether `entry` covers the name (lower case, no trailing dot) or IPv4 address `host` on `port` (null: any port, as a DNS question asks). */
export function entryCovers(entry: EgressEntry, host: string, port: number | null): boolean {
  if (entry.port !== null && port !== null && entry.port !== port) return false;
  if (entry.kind === 'cidr') {
    const address = parseCidr(`${host}/32`);
    if (!address) return false;
    const size = 2 ** (32 - entry.block.prefix);
    return Math.floor(address.base / size) === Math.floor(entry.block.base / size);
  }
  return entry.wildcard ? host.endsWith(`.${entry.name}`) : host === entry.name;
}

export type EgressDecision = { allowed: true; entry: EgressEntry } | { allowed: false; entry: EgressEntry | null };

/**
 * Whether a sandbox may reach `host` (a name or an IPv4 address) on `port`: a deny entry covering
 * it wins, then an allow entry; nothing covering it denies. `port` null asks whether any port is
 * allowed, as the resolver must before it answers a name.
 */
export function decideEgress(rules: EgressRules, host: string, port: number | null): EgressDecision {
  const target = host.toLowerCase().replace(/\.$/, '');
  // A deny entry with a port closes that port only, so for "any port" it does not deny the name.
  const denied = rules.deny.find((entry) => entryCovers(entry, target, port) && (port !== null || entry.port === null));
  if (denied) return { allowed: false, entry: denied };
  const allowed = rules.allow.find((entry) => entryCovers(entry, target, port));
  return allowed ? { allowed: true, entry: allowed } : { allowed: false, entry: null };
}

/** The ports of the host a policy opens (its allowed `host.sandbox.internal:PORT` entries). */
export function hostPortsOf(rules: EgressRules): number[] {
  const ports = rules.allow.flatMap((entry) => (entry.kind === 'name' && entry.name === HOST_NAME && entry.port !== null ? [entry.port] : []));
  return [...new Set(ports)].filter((port) => decideEgress(rules, HOST_NAME, port).allowed).sort((a, b) => a - b);
}
