import type { Logger } from '../../logger.js';

/** A healthy engine's last-seen time is written at most this often. */
const HEALTH_HEARTBEAT_MS = 30_000;

export interface EngineHealthOptions {
  /** Told of a change of health at once, and every HEALTH_HEARTBEAT_MS while healthy (ReconcilerOptions.onHealth). */
  onHealth: ((healthy: boolean, detail: string | null) => Promise<void>) | undefined;
  /** Whether the reconciler is stopped: a stopped one reports nothing. */
  stopped: () => boolean;
  log: Logger;
}

/**
 * Whether one reconciler's engine answers: when it was found gone (its event stream ended, or it
 * did not answer a listing), and what was last reported of it.
 */
export class EngineHealth {
  private readonly options: EngineHealthOptions;
  private lostSince: number | undefined;
  /** The health last reported (undefined: not yet, or the report failed), and when. */
  private reportedHealthy: boolean | undefined;
  private reportedAt = 0;

  constructor(options: EngineHealthOptions) {
    this.options = options;
  }

  /** When the engine was found gone, undefined while it answers. */
  get lostAt(): number | undefined {
    return this.lostSince;
  }

  /** False from when the engine was found gone until a pass succeeds against it again. */
  available(): boolean {
    return this.lostSince === undefined;
  }

  /** A replica taking the engine over reports what it finds, whatever was reported before. */
  forgetReported(): void {
    this.reportedHealthy = undefined;
  }

  lost(detail: string): void {
    this.lostSince ??= Date.now();
    this.report(false, detail);
  }

  /** The engine answered a pass that began with `lostAt` as it was: healthy, unless it was found gone meanwhile. */
  answered(lostAtBefore: number | undefined): void {
    if (this.lostSince === lostAtBefore) this.report(true, null);
  }

  /**
   * A pass that began after the engine was lost at `lostAtBefore` went through: the engine is back,
   * unless it went away again during the pass. Returns whether it is back.
   */
  recovered(lostAtBefore: number | undefined): boolean {
    if (lostAtBefore === undefined || this.lostSince !== lostAtBefore) return false;
    this.lostSince = undefined;
    return true;
  }

  /**
   * Reports a change of the engine's health at once; a healthy engine is also reported every
   * HEALTH_HEARTBEAT_MS, which keeps its last-seen time fresh without a write per pass.
   */
  private report(healthy: boolean, detail: string | null): void {
    const now = Date.now();
    const { onHealth } = this.options;
    if (!onHealth || this.options.stopped()) return;
    if (this.reportedHealthy === healthy && (!healthy || now - this.reportedAt < HEALTH_HEARTBEAT_MS)) return;
    this.reportedHealthy = healthy;
    this.reportedAt = now;
    onHealth(healthy, detail).catch((err: unknown) => {
      this.reportedHealthy = undefined;
      this.options.log.warn({ err, healthy }, 'engine health could not be recorded; retrying after the next pass');
    });
  }
}
