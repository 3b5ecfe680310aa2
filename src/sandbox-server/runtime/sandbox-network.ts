import { createHash } from 'node:crypto';
import type { SandboxNetwork } from '../../contracts/sandbox.js';

/**
 * How a sandbox's own network looks on the host, chosen so that a few fixed firewall rules
 * (firewall.ts) cover every sandbox network at once, whoever created it and whenever:
 *
 * - its bridge interface is named by what it reaches, `sbxi...` (internet), `sbxn...` (none) or
 *   `sbxa...` (allowlist), so `-i sbx+` matches every sandbox bridge and `-i sbxn+` the ones that
 *   reach nothing;
 * - its subnet is a small block of SANDBOX_NETWORK_POOL rather than one of the engine's default
 *   pools, which hold about thirty networks per machine: one per sandbox would soon run out.
 */
const BRIDGE_PREFIXES: Record<SandboxNetwork, string> = { internet: 'sbxi', none: 'sbxn', allowlist: 'sbxa' };
/** iptables' wildcard for every sandbox bridge, and for those of `none` networks. */
export const EVERY_SANDBOX_BRIDGE = 'sbx+';
export const OFFLINE_SANDBOX_BRIDGE = `${BRIDGE_PREFIXES.none}+`;
export const ONLINE_SANDBOX_BRIDGE = `${BRIDGE_PREFIXES.internet}+`;
export const ALLOWLIST_SANDBOX_BRIDGE = `${BRIDGE_PREFIXES.allowlist}+`;
/** Linux caps interface names at 15 characters. */
const INTERFACE_NAME_MAX = 15;
/** A /29 holds the bridge's gateway and the sandbox's one container, with room to spare. */
export const SANDBOX_SUBNET_PREFIX = 29;

/** The bridge of a sandbox network; derived from the network's name so that adopting it finds the same. */
export function bridgeNameFor(networkName: string, access: SandboxNetwork): string {
  const prefix = BRIDGE_PREFIXES[access];
  return prefix + createHash('sha256').update(networkName).digest('hex').slice(0, INTERFACE_NAME_MAX - prefix.length);
}

/** An IPv4 block as two unsigned 32-bit numbers. */
export interface Ipv4Block {
  base: number;
  prefix: number;
}

export function parseCidr(cidr: string): Ipv4Block | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr);
  if (!match) return undefined;
  const octets = match.slice(1, 5).map(Number);
  const prefix = Number(match[5]);
  if (octets.some((o) => o > 255) || prefix > 32) return undefined;
  const address = octets.reduce((sum, o) => sum * 256 + o, 0);
  return { base: address - (address % 2 ** (32 - prefix)), prefix };
}

export function formatCidr(block: Ipv4Block): string {
  const octets = [24, 16, 8, 0].map((shift) => Math.floor(block.base / 2 ** shift) % 256);
  return `${octets.join('.')}/${block.prefix}`;
}

export function overlaps(a: Ipv4Block, b: Ipv4Block): boolean {
  const size = 2 ** (32 - Math.min(a.prefix, b.prefix));
  return Math.floor(a.base / size) === Math.floor(b.base / size);
}

/**
 * The /29 blocks of `pool` to try for a network, starting at one derived from `seed` (its name, so
 * that two engines on one machine rarely try the same block at once) and walking the pool from there.
 */
export function* subnetCandidates(seed: string, pool: Ipv4Block): Generator<Ipv4Block> {
  const count = 2 ** Math.max(0, SANDBOX_SUBNET_PREFIX - pool.prefix);
  const size = 2 ** (32 - SANDBOX_SUBNET_PREFIX);
  const start = createHash('sha256').update(seed).digest().readUInt32BE(0) % count;
  for (let i = 0; i < count; i++) yield { base: pool.base + ((start + i) % count) * size, prefix: SANDBOX_SUBNET_PREFIX };
}

/**
 * The IPv4 blocks the host routes, from /proc/net/route (addresses in the kernel's byte order, that
 * is little-endian hex). Another engine's bridges and the LAN show up here; the engine creating a
 * network with an explicit subnet checks only its own networks for overlaps.
 */
export function parseRoutes(procNetRoute: string): Ipv4Block[] {
  return procNetRoute
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length >= 8 && fields[1] !== '00000000')
    .map((fields) => {
      const base = littleEndianHex(fields[1] ?? '');
      const mask = littleEndianHex(fields[7] ?? '');
      const prefix = mask.toString(2).replaceAll('0', '').length;
      return { base, prefix };
    });
}

function littleEndianHex(hex: string): number {
  const buffer = Buffer.from(hex.padStart(8, '0'), 'hex');
  return buffer.readUInt32LE(0);
}
