/**
 * Buffers for reading records, reused across reads and logs. A page of scattered matches is read as
 * runs of up to RUN_BYTES; a fresh buffer per run was up to a MiB of external memory per search,
 * and V8 answers that growth with extra garbage collections, which showed as the searches' tail
 * latency. Records are decoded into strings before a buffer is given back, so none outlives its
 * read. The trade-off: a few MiB kept per process.
 */
export const RUN_BYTES = 1024 * 1024;
/** Reads in flight at once that get a pooled buffer (a page's runs, concurrent searches); more allocate. */
const KEPT = 4;
/** Reads from this size on get (and later give back) a pooled buffer when none is free. */
const POOLED_FROM = 64 * 1024;

const free: Buffer[] = [];

/** A buffer of at least `length` bytes; hand it back with `releaseReadBuffer` once decoded. */
export function takeReadBuffer(length: number): Buffer {
  if (length > RUN_BYTES) return Buffer.allocUnsafe(length);
  const pooled = free.pop();
  if (pooled) return pooled;
  // A small read (a lone record) costs little on its own; a MiB for each of a page's lone records would not.
  return length >= POOLED_FROM ? Buffer.allocUnsafeSlow(RUN_BYTES) : Buffer.allocUnsafe(length);
}

export function releaseReadBuffer(buffer: Buffer): void {
  if (buffer.length === RUN_BYTES && free.length < KEPT) free.push(buffer);
}
