import { CliError } from './cli-error.js';
import { formatElapsed } from './format.js';
import type { Progress } from './progress.js';

/** How often a waiting command asks the server again. */
export const POLL_INTERVAL_MS = 500;

export type WaitState = 'done' | 'failed' | 'pending';

export interface WaitOptions<T> {
  progress: Progress;
  timeoutMs: number;
  /** The value already known when waiting starts. */
  initial: T;
  /** The current value, read again after each interval. */
  read(): Promise<T>;
  state(value: T): WaitState;
  /** The progress text for a value, e.g. `sandbox abc: STARTING`. */
  describe(value: T): string;
  /** The error line when the value ended in failure. */
  failure(value: T): string;
  /** The error line, given the elapsed time, when the value is still pending at the timeout. */
  timeout(value: T, elapsed: string): string;
}

/** Polls until the value is done (returned) or failed or timed out (a CliError), showing progress. */
export async function waitFor<T>(options: WaitOptions<T>): Promise<T> {
  const { progress } = options;
  let value = options.initial;
  for (;;) {
    const state = options.state(value);
    if (state === 'done') return value;
    if (state === 'failed') {
      progress.stop();
      throw new CliError(options.failure(value));
    }
    progress.update(options.describe(value));
    if (progress.elapsedMs >= options.timeoutMs) {
      progress.stop();
      throw new CliError(options.timeout(value, formatElapsed(progress.elapsedMs)));
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
    value = await options.read().catch((error: unknown) => {
      progress.stop();
      throw error;
    });
  }
}
