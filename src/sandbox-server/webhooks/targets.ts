/**
 * Where webhooks may send: public addresses, and the hosts WEBHOOK_ALLOWED_HOSTS names. A webhook
 * is a request the control plane makes on a caller's behalf, from inside the operator's network: to
 * loopback, a private range or this machine it would reach what the caller cannot (a keyless control
 * plane, a Docker API, a cloud's metadata service).
 */
import { lookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import { type AddressKind, addressKind } from '../net/address-kind.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to; throws when it resolves to none. */
export type ResolveHost = (host: string) => Promise<ResolvedAddress[]>;

export type TargetVerdict =
  /** `addresses` are what the connection must go to (it is pinned to them); `private` when one is not public. */
  | { allowed: true; private: boolean; addresses: ResolvedAddress[] }
  /** `reason` names the kind of address, never the address: the caller learns no more than "no". */
  | { allowed: false; reason: string };

export interface WebhookTargets {
  /** Resolves the URL's host and judges every address it resolves to. */
  judge(url: URL): Promise<TargetVerdict>;
}

export interface WebhookTargetsOptions {
  /** WEBHOOK_ALLOWED_HOSTS: hosts as written in URLs (names or addresses) that may be non-public. */
  allowedHosts: readonly string[];
  /** Default: the system resolver (getaddrinfo, so /etc/hosts too). */
  resolve?: ResolveHost;
  /** This machine's own addresses; default: those of its network interfaces. */
  ownAddresses?: readonly string[];
}

/** The text of a refusal of a host that is not public and not allowed. */
export const NOT_PUBLIC = 'webhooks go to public addresses only, unless WEBHOOK_ALLOWED_HOSTS names the host';

export function createWebhookTargets(options: WebhookTargetsOptions): WebhookTargets {
  const allowed = new Set(options.allowedHosts.map(normalHost));
  const own = new Set((options.ownAddresses ?? interfaceAddresses()).map((address) => address.toLowerCase()));
  const resolve = options.resolve ?? systemResolve;
  return {
    async judge(url) {
      const host = normalHost(url.hostname);
      let addresses: ResolvedAddress[];
      try {
        addresses = isIP(host) === 0 ? await resolve(host) : [{ address: host, family: isIP(host) as 4 | 6 }];
      } catch {
        return { allowed: false, reason: `the host ${host} could not be resolved` };
      }
      if (addresses.length === 0) return { allowed: false, reason: `the host ${host} could not be resolved` };
      const kinds = addresses.map(({ address }): AddressKind | 'this machine' => {
        const kind = addressKind(address);
        return kind === 'public' && own.has(address.toLowerCase()) ? 'this machine' : kind;
      });
      const notPublic = kinds.find((kind) => kind !== 'public');
      if (notPublic === undefined) return { allowed: true, private: false, addresses };
      if (allowed.has(host)) return { allowed: true, private: true, addresses };
      return { allowed: false, reason: `the host ${host} resolves to ${describeKind(notPublic)}; ${NOT_PUBLIC}` };
    },
  };
}

/**
 * A node:http `lookup` that answers the addresses already judged, so the connection goes where the
 * check looked (a second resolution could answer otherwise: DNS rebinding). The URL keeps its name,
 * so TLS still checks the certificate against it (SNI) and `Host` still carries it.
 */
export function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) {
      callback(null, addresses.map(({ address, family }) => ({ address, family })));
      return;
    }
    const [first] = addresses;
    if (first) callback(null, first.address, first.family);
    else callback(new Error('no address'), '', 4);
  };
}

function describeKind(kind: AddressKind | 'this machine'): string {
  if (kind === 'this machine') return 'an address of this machine';
  return `${kind === 'unspecified' ? 'an' : 'a'} ${kind} address`;
}

function normalHost(host: string): string {
  return host.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

async function systemResolve(host: string): Promise<ResolvedAddress[]> {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}
