import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { addressKind } from '../net/address-kind.js';
import { HOST_NAME } from '../net/egress-policy.js';

/** Where the egress proxy dials a name a sandbox may reach. */
export type ResolveUpstream = (host: string) => Promise<string>;

/** A name or address the proxy will not dial for a sandbox. */
export class UpstreamRefused extends Error {}

export interface UpstreamOptions {
  /**
   * SANDBOX_EGRESS_HOSTS: names the operator maps to addresses (a name server of its own, a test's
   * "remote" servers on 127.0.0.x). Trusted as given, loopback included.
   */
  hosts: Readonly<Record<string, string>>;
  /** SANDBOX_HOST_ADDRESS: what `host.sandbox.internal` is on the host (127.0.0.1: services on loopback). */
  hostAddress: string;
  lookup?: (name: string) => Promise<string[]>;
}

const lookupAll = async (name: string) => (await lookup(name, { all: true })).map((answer) => answer.address);

/**
 * How the proxy finds the address to dial. The proxy runs on the host, so an address that is the
 * host itself (loopback, any address of its interfaces) would hand a sandbox the host's services:
 * only `host.sandbox.internal` (its own ports, by policy) and the operator's own mapping reach them.
 */
export function createUpstreamResolver(options: UpstreamOptions): ResolveUpstream {
  const resolveName = options.lookup ?? lookupAll;
  return async (host) => {
    if (host === HOST_NAME) return options.hostAddress;
    const mapped = options.hosts[host];
    if (mapped !== undefined) return mapped;
    const addresses = isIP(host) !== 0 ? [host] : await resolveName(host).catch(() => []);
    if (addresses.length === 0) throw new UpstreamRefused(`${host} does not resolve`);
    const own = hostAddresses();
    const usable = addresses.find((address) => !own.has(address) && !['loopback', 'unspecified'].includes(addressKind(address)));
    if (usable === undefined) throw new UpstreamRefused(`${host} is this machine: reach the host as ${HOST_NAME}:PORT`);
    return usable;
  };
}

function hostAddresses(): Set<string> {
  return new Set(
    Object.values(networkInterfaces())
      .flatMap((addresses) => addresses ?? [])
      .map((address) => address.address),
  );
}

/** SANDBOX_EGRESS_HOSTS's form: `name=address,name=address`. */
export function parseHostsSetting(value: string): Record<string, string> | string {
  const hosts: Record<string, string> = {};
  for (const pair of value.split(',').map((part) => part.trim()).filter((part) => part !== '')) {
    const [name = '', address = '', ...rest] = pair.split('=');
    if (rest.length > 0 || name.trim() === '' || isIP(address.trim()) === 0) return `"${pair}" is not name=address`;
    hosts[name.trim().toLowerCase()] = address.trim();
  }
  return hosts;
}
