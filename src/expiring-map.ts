/**
 * A map whose entries are forgotten `ttlMs` after they were set: what a hot path remembers of a
 * slower source (the database, a probe) for a moment. Bounded: past `maxEntries` the expired go
 * first, then the oldest, so keys nobody asks about again cannot grow it.
 */
export class ExpiringMap<K, V> {
  readonly #entries = new Map<K, { value: V; at: number }>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;

  constructor(ttlMs: number, maxEntries = 10_000) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
  }

  get(key: K, now = Date.now()): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (now - entry.at < this.#ttlMs) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: K, value: V, now = Date.now()): void {
    // Delete first so the key moves to the end: the map's order is the order of setting.
    this.#entries.delete(key);
    this.#entries.set(key, { value, at: now });
    if (this.#entries.size <= this.#maxEntries) return;
    for (const [old, entry] of this.#entries) if (now - entry.at >= this.#ttlMs) this.#entries.delete(old);
    for (const old of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxEntries) break;
      this.#entries.delete(old);
    }
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}
