/**
 * Waits `ms`, or less when `signal` aborts: a following stream should stop at once when its
 * caller gives up, without the rejection node:timers/promises would throw at every retry loop.
 */
export function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
