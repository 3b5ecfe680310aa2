import { maintainWarmPools, type WarmPoolContext } from './maintain.js';

export interface WarmPoolKeeperOptions extends WarmPoolContext {
  /** How often the pools are checked besides refill() (RECONCILE_INTERVAL_MS). */
  intervalMs: number;
  /** Hands each member it changed or added to its engine's reconciler. */
  kick(sandboxId: string): void;
}

/**
 * Keeps every spec's warm pool at its size, across all engines: one planner for the fleet, so that
 * the pools' sizes and MAX_WARM_SANDBOXES hold whichever engines the members land on. It runs on an
 * interval and on refill() (after a claim); top-ups asked for while one runs share the next one.
 */
export class WarmPoolKeeper {
  readonly #options: WarmPoolKeeperOptions;
  #interval: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = true;

  constructor(options: WarmPoolKeeperOptions) {
    this.#options = options;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#interval = setInterval(() => this.refill(), this.#options.intervalMs).unref();
    this.refill();
  }

  /** Asks for a top-up soon. */
  refill(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#topUp().finally(() => {
      this.#running = undefined;
      if (this.#again) {
        this.#again = false;
        this.refill();
      }
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#again = false;
    clearInterval(this.#interval);
    await this.#running;
  }

  async #topUp(): Promise<void> {
    try {
      const changed = await maintainWarmPools(this.#options);
      for (const sandboxId of changed) this.#options.kick(sandboxId);
    } catch (error) {
      this.#options.log.warn({ err: error }, 'warm pools could not be topped up; trying again at the next interval');
    }
  }
}
