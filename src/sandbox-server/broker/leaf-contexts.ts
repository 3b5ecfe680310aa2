import { createSecureContext, type SecureContext } from 'node:tls';
import { LEAF_VALIDITY_MS, LeafIssuer, type CaMaterial } from './certificate-authority.js';

/** Hosts whose contexts are kept; the least recently used goes first beyond this. */
const MAX_CACHED = 1000;
/** A cached leaf is re-minted once this old, well before it expires. */
const REFRESH_AFTER_MS = LEAF_VALIDITY_MS / 3;

/**
 * TLS server contexts for the hosts sandboxes connect to, each with a leaf minted under the
 * installation's CA on first use and cached (minting is one RSA signature, a few milliseconds).
 */
export class LeafContexts {
  readonly #issuer: LeafIssuer;
  readonly #cache = new Map<string, { context: SecureContext; mintedAt: number }>();

  constructor(ca: CaMaterial) {
    this.#issuer = new LeafIssuer(ca);
  }

  /** The context presenting a certificate for `host` (case does not matter, as in DNS). */
  for(host: string, now = Date.now()): SecureContext {
    const name = host.toLowerCase();
    const cached = this.#cache.get(name);
    if (cached && now - cached.mintedAt < REFRESH_AFTER_MS) {
      this.#cache.delete(name);
      this.#cache.set(name, cached);
      return cached.context;
    }
    const leaf = this.#issuer.issue(name, new Date(now));
    const entry = { context: createSecureContext({ cert: leaf.certPem, key: leaf.keyPem }), mintedAt: now };
    this.#cache.delete(name);
    this.#cache.set(name, entry);
    if (this.#cache.size > MAX_CACHED) this.#cache.delete(this.#cache.keys().next().value as string);
    return entry.context;
  }

  get size(): number {
    return this.#cache.size;
  }
}
