export interface BackoffPolicy {
  minWaitMs: number;
  maxWaitMs: number;
  /** The first wait before clamping (OpenHands' retry_multiplier); minWaitMs when absent. */
  multiplierMs?: number;
}

/** Share of the delay added at random, so clients that failed together do not retry together. */
const JITTER = 0.25;

/**
 * How long to wait before retry number `retry` (0 for the first): multiplier, 2·multiplier,
 * 4·multiplier… with jitter, never less than min nor more than max. A server's Retry-After wins over our own schedule, still capped at max so a
 * far-off date cannot stall a conversation.
 *
 * @param random a number in [0, 1)
 */
export function retryDelayMs(retry: number, policy: BackoffPolicy, retryAfterMs: number | null, random: number): number {
  if (retryAfterMs !== null) return Math.min(retryAfterMs, policy.maxWaitMs);
  const exponential = (policy.multiplierMs ?? policy.minWaitMs) * 2 ** retry;
  return Math.min(policy.maxWaitMs, Math.max(policy.minWaitMs, Math.round(exponential * (1 + JITTER * random))));
}

/**
 * The wait a server asked for: OpenAI's `retry-after-ms`, else `Retry-After` in seconds or as an
 * HTTP date. Null when absent or unreadable.
 */
export function parseRetryAfterMs(headers: Pick<Headers, 'get'>, now: number): number | null {
  const milliseconds = nonNegativeNumber(headers.get('retry-after-ms'));
  if (milliseconds !== null) return milliseconds;
  const value = headers.get('retry-after');
  if (value === null) return null;
  const seconds = nonNegativeNumber(value);
  if (seconds !== null) return seconds * 1000;
  // An HTTP date always names its month; without that test Date.parse reads "-1" as a year.
  const date = /[a-z]/i.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function nonNegativeNumber(value: string | null): number | null {
  if (value === null || value.trim() === '') return null;
  const number = Number(value);
  return Number.isFinite(number) && number >= 0 ? number : null;
}
