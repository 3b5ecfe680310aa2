import type { Database } from '../db/client.js';
import type { Logger } from '../../logger.js';
import { acquireLease, releaseLease } from './lease.js';

export interface LeaseKeeperOptions {
  db: Database;
  /** The job the lease guards, e.g. `reconciler/local`. */
  name: string;
  /** This replica, unique among those sharing the database. */
  holder: string;
  /** How long a lease lasts unrenewed: the longest a dead holder delays a takeover. */
  ttlMs: number;
  /** Called when the lease is won; the job starts. Never overlaps `onLost`. */
  onAcquired(): Promise<void>;
  /** Called when the lease is lost (or given up); the job must stop acting. */
  onLost(): Promise<void>;
  log: Logger;
}

/**
 * Keeps asking for a lease, renewing it while held, every third of its time to live. The holder
 * stops by its own clock before the database would let anyone else in: it counts its lease from the
 * moment it asked (not when the answer came) and gives up a margin early, so a renewal that hangs
 * (a database restart) or a replica cut off from the database never overlaps the next holder.
 */
export class LeaseKeeper {
  readonly #options: LeaseKeeperOptions;
  #held = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #deadline: NodeJS.Timeout | undefined;
  /** onAcquired and onLost run one after the other, in the order the changes happened. */
  #transitions: Promise<void> = Promise.resolve();

  constructor(options: LeaseKeeperOptions) {
    this.#options = options;
  }

  /** Whether this replica holds the lease now. */
  get held(): boolean {
    return this.#held;
  }

  /** Asks at once, then keeps asking. Resolves after the first answer (and its onAcquired). */
  async start(): Promise<void> {
    this.#stopped = false;
    await this.#tick();
    await this.#transitions;
  }

  /** Stops asking and gives the lease up (after onLost), so another replica takes over at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    const wasHeld = this.#held;
    this.#lose('released');
    await this.#transitions;
    if (wasHeld) await releaseLease(this.#options.db, this.#options.name, this.#options.holder).catch(() => undefined);
  }

  async #tick(): Promise<void> {
    const { db, name, holder, ttlMs, log } = this.#options;
    const askedAt = Date.now();
    let won = false;
    try {
      won = await acquireLease(db, name, holder, ttlMs);
    } catch (err) {
      // Still held until the deadline set by the last renewal; the next tick tries again.
      log.warn({ err, lease: name }, 'lease could not be renewed');
      this.#schedule();
      return;
    }
    if (this.#stopped) return;
    if (won) this.#win(askedAt + ttlMs - marginFor(ttlMs) - Date.now());
    else this.#lose('taken by another replica');
    this.#schedule();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#tick(), this.#options.ttlMs / 3).unref();
  }

  #win(validForMs: number): void {
    clearTimeout(this.#deadline);
    this.#deadline = setTimeout(() => {
      this.#lose('expired before it could be renewed');
    }, Math.max(0, validForMs)).unref();
    if (this.#held) return;
    this.#held = true;
    this.#options.log.info({ lease: this.#options.name, holder: this.#options.holder }, 'lease acquired');
    this.#transitions = this.#transitions.then(() => this.#options.onAcquired()).catch((err: unknown) => this.#options.log.error({ err }, 'lease holder failed to start'));
  }

  #lose(why: string): void {
    clearTimeout(this.#deadline);
    if (!this.#held) return;
    this.#held = false;
    this.#options.log[this.#stopped ? 'info' : 'warn']({ lease: this.#options.name, holder: this.#options.holder, why }, 'lease given up');
    this.#transitions = this.#transitions.then(() => this.#options.onLost()).catch((err: unknown) => this.#options.log.error({ err }, 'lease holder failed to stop'));
  }
}

/**
 * A fifth of the lease: clocks drift and timers fire late on a busy machine. What is left still
 * spans two renewals, so one late or failed renewal does not cost the lease.
 */
function marginFor(ttlMs: number): number {
  return ttlMs / 5;
}
