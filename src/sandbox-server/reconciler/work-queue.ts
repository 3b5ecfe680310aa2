/** Time and timers, injected so that the queue can be tested with a fake clock. */
export interface Clock {
  now(): number;
  setTimer(callback: () => void, delayMs: number): unknown;
  clearTimer(timer: unknown): void;
}

/** The real clock; its timers never keep the process alive on their own. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (callback, delayMs) => setTimeout(callback, delayMs).unref(),
  clearTimer: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

export interface WorkQueueOptions {
  /** Called whenever a key becomes ready; the consumer then take()s. Called once per batch of keys. */
  onReady: () => void;
  clock?: Clock;
  /** Back-off of addRateLimited: baseMs after the first failure, doubling per failure up to maxMs. */
  backoff?: { baseMs: number; maxMs: number };
}

/**
 * A rate-limited work queue, after controller-runtime's workqueue: a key is in it at most once
 * (adding it again while it waits is free), add() makes it ready now, addAfter() at a later time
 * (the earliest request wins), addRateLimited() after a per-key exponential back-off that forget()
 * resets. It knows nothing of what the keys name, so each engine can have one.
 *
 * Unlike controller-runtime it hands out every ready key at once (take()), because its consumer
 * observes the runtime once per batch rather than once per key; the consumer runs one batch at a
 * time, so a key is never processed twice at once.
 */
export class WorkQueue<K> {
  private readonly onReady: () => void;
  private readonly clock: Clock;
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly ready = new Set<K>();
  /** key -> when it becomes ready */
  private readonly waiting = new Map<K, number>();
  private readonly failures = new Map<K, { attempts: number; until: number }>();
  private timer: unknown;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(options: WorkQueueOptions) {
    this.onReady = options.onReady;
    this.clock = options.clock ?? systemClock;
    this.baseMs = options.backoff?.baseMs ?? 500;
    this.maxMs = options.backoff?.maxMs ?? 30_000;
  }

  /** Ready now. */
  add(key: K): void {
    this.addAt(key, this.clock.now());
  }

  /** Ready after `delayMs`, unless it is (or will be) ready sooner. */
  addAfter(key: K, delayMs: number): void {
    this.addAt(key, this.clock.now() + Math.max(0, delayMs));
  }

  /** Counts one more failure of the key and adds it after its back-off; returns that delay. */
  addRateLimited(key: K): number {
    const now = this.clock.now();
    const attempts = (this.failures.get(key)?.attempts ?? 0) + 1;
    const delayMs = Math.min(this.baseMs * 2 ** (attempts - 1), this.maxMs);
    this.failures.set(key, { attempts, until: now + delayMs });
    this.addAt(key, now + delayMs);
    return delayMs;
  }

  /** The key succeeded: its next failure backs off from the start again. */
  forget(key: K): void {
    this.failures.delete(key);
  }

  /** How long the key's current back-off still runs (0 when it is not backing off). */
  backoffRemainingMs(key: K): number {
    const until = this.failures.get(key)?.until;
    return until === undefined ? 0 : Math.max(0, until - this.clock.now());
  }

  /** Every ready key, in the order they became ready; they leave the queue. */
  take(): K[] {
    const keys = [...this.ready];
    this.ready.clear();
    return keys;
  }

  /** Drops every ready and waiting key (back-off memory stays). */
  clear(): void {
    this.ready.clear();
    this.waiting.clear();
    this.disarm();
  }

  private addAt(key: K, at: number): void {
    if (this.ready.has(key)) return;
    if (at <= this.clock.now()) {
      this.waiting.delete(key);
      this.ready.add(key);
      this.onReady();
      return;
    }
    const current = this.waiting.get(key);
    if (current !== undefined && current <= at) return;
    this.waiting.set(key, at);
    if (at < this.timerAt) this.arm(at);
  }

  private arm(at: number): void {
    this.disarm();
    this.timerAt = at;
    this.timer = this.clock.setTimer(() => this.promoteDue(), Math.max(0, at - this.clock.now()));
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private promoteDue(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    let next = Number.POSITIVE_INFINITY;
    let promoted = false;
    for (const [key, at] of this.waiting) {
      if (at > now) {
        next = Math.min(next, at);
        continue;
      }
      this.waiting.delete(key);
      this.ready.add(key);
      promoted = true;
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
    if (promoted) this.onReady();
  }
}
