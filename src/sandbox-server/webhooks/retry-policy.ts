export interface RetryPolicy {
  /** Wait before the second attempt; each later wait doubles. */
  firstRetryMs: number;
  /** No wait is longer than this. */
  maxRetryMs: number;
  /** A delivery still failing this long after it was queued is given up. */
  giveUpAfterMs: number;
  /** A webhook whose deliveries have failed without a success this long is disabled. */
  disableAfterMs: number;
}

const HOUR_MS = 60 * 60 * 1000;

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  firstRetryMs: 5_000,
  maxRetryMs: HOUR_MS,
  giveUpAfterMs: 24 * HOUR_MS,
  disableAfterMs: 24 * HOUR_MS,
};

/** How long to wait after the `attempts`-th failed attempt (1-based). */
export function retryDelayMs(policy: RetryPolicy, attempts: number): number {
  return Math.min(policy.firstRetryMs * 2 ** Math.max(0, attempts - 1), policy.maxRetryMs);
}
