import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Logger } from '../../logger.js';
import type { Database } from '../db/client.js';
import { engines, sandboxes, sandboxSpecs } from '../db/schema.js';
import { type MoveContext, movable, moveSandbox } from './move-sandbox.js';
import { agentWasBusy, type AskAgentIdleMs, askAgentIdleMs } from '../reconciler/agent-idle.js';

export interface DrainerOptions extends Omit<MoveContext, 'db' | 'log'> {
  db: Database;
  log: Logger;
  /** The engines whose lease this replica holds now: only their sandboxes are moved here. */
  ownEngines(): string[];
  intervalMs: number;
  /** A running sandbox with no request through the control plane for this long is idle: a drain moves it (DRAIN_IDLE_SECONDS). */
  idleMs: number;
  /** How long a sandbox's agent did no work; default its /server_info idle_time. */
  askAgentIdle?: AskAgentIdleMs;
}

/**
 * Moves the paused and idle running sandboxes of DRAINING engines to other engines, one at a time
 * per engine, in the replica holding each draining engine's lease, so that no two replicas move one
 * sandbox (the move's last transaction also checks the sandbox is still the engine's). A running
 * sandbox is idle once no request reached it through the control plane for `idleMs` and its agent
 * did no work for as long (as idle auto-pause judges it); a busy one runs on where it is until it is
 * idle (or paused). It is moved
 * paused and started again on its new engine. Those of specs that are not `movable` stay until
 * deleted. A sandbox that cannot be moved now (no engine fits it) is tried again on the next round.
 */
export class Drainer {
  readonly #options: DrainerOptions;
  #timer: NodeJS.Timeout | undefined;
  #round: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(options: DrainerOptions) {
    this.#options = options;
  }

  start(): void {
    this.#stopped = false;
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#round;
  }

  /** One round now (after the one under way): a drain was just asked for. */
  kick(): Promise<void> {
    this.#round = this.#round.then(() => this.#drainAll());
    return this.#round;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      void this.kick().finally(() => this.#schedule());
    }, this.#options.intervalMs);
    this.#timer.unref();
  }

  async #drainAll(): Promise<void> {
    const { db, log } = this.#options;
    const own = new Set(this.#options.ownEngines());
    if (own.size === 0 || this.#stopped) return;
    try {
      const draining = await db.select({ name: engines.name }).from(engines).where(eq(engines.state, 'DRAINING'));
      await Promise.all(draining.filter((engine) => own.has(engine.name)).map((engine) => this.#drain(engine.name)));
    } catch (err) {
      log.error({ err }, 'drain round failed; the next one tries again');
    }
  }

  /** Moves the engine's paused and idle sandboxes, oldest first, until none is left or one cannot be moved now. */
  async #drain(engine: string): Promise<void> {
    const { db, log } = this.#options;
    for (;;) {
      if (this.#stopped || !this.#options.ownEngines().includes(engine)) return;
      const now = new Date();
      const idleSince = new Date(now.getTime() - this.#options.idleMs);
      const [found] = await db
        .select({ row: sandboxes })
        .from(sandboxes)
        .innerJoin(sandboxSpecs, eq(sandboxSpecs.id, sandboxes.specId))
        .where(and(eq(sandboxes.engine, engine), isNull(sandboxes.deletedAt), eq(sandboxSpecs.movable, true), movable(idleSince)))
        .orderBy(asc(sandboxes.createdAt), asc(sandboxes.id))
        .limit(1);
      if (!found) return;
      const next = found.row;
      // Its agent's later work becomes its last activity, so the next look passes over it.
      if (next.status === 'RUNNING' && (await agentWasBusy(db, next, this.#options.idleMs, now, this.#options.askAgentIdle ?? askAgentIdleMs))) continue;
      const outcome = await moveSandbox({ ...this.#options }, next.id, engine, idleSince).catch((err: unknown) => {
        log.warn({ err, sandboxId: next.id, engine }, 'could not move a sandbox off a draining engine; trying again later');
        return { moved: false as const, why: 'failed' };
      });
      if (!outcome.moved) {
        log.info({ sandboxId: next.id, engine, why: outcome.why }, 'sandbox not moved off the draining engine this round');
        return;
      }
      log.info({ sandboxId: next.id, from: engine, to: outcome.to }, 'sandbox moved off a draining engine');
    }
  }
}
