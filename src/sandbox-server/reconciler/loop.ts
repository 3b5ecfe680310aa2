import { LOCAL_ENGINE } from '../../contracts/engine.js';
import type { Database } from '../db/client.js';
import type { SandboxMetrics } from '../../http/metrics/index.js';
import { type Logger, logger } from '../../logger.js';
import { type ContainerObservation, ENGINE_DISCONNECTED, type RuntimeEvent, RuntimeError, type SandboxRuntime } from '../runtime/runtime.js';
import { checkAgentServerAlive } from '../agent-client.js';
import { acknowledgeHolds } from './holds.js';
import { AliveProbes } from './alive-probes.js';
import { observeArrival } from './arrival-latency.js';
import { BackgroundCreates } from './background-creates.js';
import { EngineHealth } from './engine-health.js';
import { exitedWhileWanted, requireNewConnections, stoppedByEngine } from './engine-shutdown.js';
import { EventedContainers } from './evented-containers.js';
import { FrozenAlive } from './frozen-alive.js';
import { forEachLimited, waitAtMost } from './limit.js';
import { limitedRuntime } from './limited-runtime.js';
import { bySandbox, listContainers, loadRows, PASS_CONCURRENCY, type RowWithSpec } from './observe.js';
import { LeftoverSweep } from './leftover-sweep.js';
import type { ReconcilerOptions } from './reconciler-options.js';
import { applyPoliciesToPass } from './policies.js';
import { DiskWatch } from './disk-watch.js';
import { type AskAgentIdleMs, askAgentIdleMs } from './agent-idle.js';
import { reconcileSandbox, type SandboxPassContext } from './reconcile-sandbox.js';
import { WorkQueue } from './work-queue.js';

/** How long stop() waits for the work under way. */
const STOP_WAIT_MS = 10_000;
/** Retryable failures back off from 500 ms, doubling, up to 30 s. */
const BACKOFF = { baseMs: 500, maxMs: 30_000 };

/** The queue's key for a pass over every sandbox (plus policies and orphans). */
const EVERY_SANDBOX = Symbol('every sandbox');
type WorkKey = string | typeof EVERY_SANDBOX;

/**
 * Converges every live sandbox row of one engine toward its desired state. Passes never overlap: kicks, runtime
 * events, requeues and the interval only add keys to the work queue, and one pass at a time takes
 * every ready key. Creates run in the background (background-creates.ts).
 */
export class Reconciler {
  private readonly db: Database;
  private readonly engine: string;
  private readonly runtime: SandboxRuntime;
  private readonly intervalMs: number;
  private readonly log: Logger;
  private readonly metrics: SandboxMetrics | undefined;
  /** What every pass hands reconcileSandbox; the same for each, so built once. */
  private readonly passContext: SandboxPassContext;

  private readonly queue: WorkQueue<WorkKey>;
  private readonly creates: BackgroundCreates;
  private readonly leftovers: LeftoverSweep;
  private readonly diskWatch: DiskWatch;
  private readonly writeListeners = new Set<(sandboxId: string) => void>();
  private readonly aliveProbes: AliveProbes;
  private readonly evented: EventedContainers;
  private readonly health: EngineHealth;
  private readonly askAgentIdle: AskAgentIdleMs;

  private stopped = true;
  private stopWatching: (() => void) | undefined;
  private interval: NodeJS.Timeout | undefined;
  private wakeScheduled = false;
  private draining = false;
  /** Serializes passes: reconcileOnce() and the loop's own passes queue here. */
  private passes: Promise<void> = Promise.resolve();

  constructor(options: ReconcilerOptions) {
    this.db = options.db;
    this.engine = options.engine ?? LOCAL_ENGINE;
    this.runtime = limitedRuntime(options.runtime);
    this.intervalMs = options.intervalMs ?? 5_000;
    this.log = logger.child({ component: 'reconciler', instanceId: options.instanceId, engine: this.engine });
    this.metrics = options.metrics;
    this.health = new EngineHealth({ onHealth: options.onHealth, stopped: () => this.stopped, log: this.log });
    this.askAgentIdle = options.askAgentIdle ?? askAgentIdleMs;
    this.creates = new BackgroundCreates(this.runtime, (sandboxId) => this.kick(sandboxId));
    this.evented = new EventedContainers(this.runtime);
    const checkAlive = options.checkAlive ?? checkAgentServerAlive;
    this.aliveProbes = new AliveProbes(checkAlive, (sandboxId) => this.kick(sandboxId));
    this.passContext = {
      db: this.db,
      log: this.log,
      runtime: this.runtime,
      checkAlive,
      advertiseHost: options.advertiseHost ?? '127.0.0.1',
      startCreate: (request) => this.creates.start(request),
      dataMountPath: options.dataMountPath ?? '/data',
      startTimeoutMs: options.startTimeoutMs ?? 300_000,
      written: (sandboxId) => this.notifyWritten(sandboxId),
      frozenAlive: new FrozenAlive(),
      aliveAnswered: (sandboxId, containerId, url) => this.aliveProbes.answered(sandboxId, containerId, url),
      // Only a running loop probes: reconcileOnce() alone (tests, a stopped loop) asks once per pass.
      notAliveYet: (sandboxId, containerId, url, sessionApiKey) => {
        if (this.stopped) return false;
        this.aliveProbes.probe(sandboxId, containerId, url, sessionApiKey);
        return this.aliveProbes.probing(sandboxId);
      },
    };
    this.queue = new WorkQueue<WorkKey>({ onReady: () => this.wake(), backoff: BACKOFF });
    this.leftovers = new LeftoverSweep({
      db: this.db,
      engine: this.engine,
      runtime: this.runtime,
      installationId: options.installationId,
      graceMs: options.orphanGraceMs ?? 60_000,
      log: this.log,
      metrics: this.metrics,
    });
    this.diskWatch = new DiskWatch({
      db: this.db,
      runtime: this.runtime,
      dataMountPath: this.passContext.dataMountPath,
      intervalMs: options.diskCheckIntervalMs ?? 10_000,
      exclusive: (work) => this.exclusive(work),
      stopped: (sandboxId) => {
        this.notifyWritten(sandboxId);
        this.kick(sandboxId);
      },
      log: this.log,
    });
  }

  /** Adopts what the runtime already runs (one full pass), then follows events and the interval. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.health.forgetReported();
    this.stopWatching = this.runtime.watch((event) => this.onRuntimeEvent(event));
    this.interval = setInterval(() => this.kick(), this.intervalMs).unref();
    try {
      await this.reconcileOnce();
    } catch (error) {
      this.passFailed(error);
    }
  }

  /** Asks for a pass soon: of one sandbox, or of everything. Kicks arriving together share a pass. */
  kick(sandboxId?: string): void {
    if (this.stopped) return;
    this.queue.add(sandboxId ?? EVERY_SANDBOX);
  }

  private onRuntimeEvent(event: RuntimeEvent): void {
    if (event.action === ENGINE_DISCONNECTED) this.health.lost('its event stream ended');
    if (!event.sandboxId) return this.kick();
    this.evented.note(event);
    this.kick(event.sandboxId);
  }

  /**
   * Stops following events and timers, then waits for the pass and the creates under way, for a
   * bounded time: a hung engine must not hang shutdown, and whatever lands later is adopted at the
   * next start.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopWatching?.();
    this.aliveProbes.stopAll();
    clearInterval(this.interval);
    this.queue.clear();
    await waitAtMost(STOP_WAIT_MS, async () => {
      await this.diskWatch.settled();
      await this.passes;
      // Read after the pass: it may have started creates of its own.
      await this.creates.allSettled();
    });
  }

  /** One full pass over every live sandbox, plus policies and orphans. Throws if it cannot observe. */
  reconcileOnce(): Promise<void> {
    return this.exclusive(() => this.pass(undefined));
  }

  private exclusive(run: () => Promise<void>): Promise<void> {
    const result = this.passes.then(run);
    this.passes = result.catch(() => undefined);
    return result;
  }

  /**
   * Keys that become ready together (a burst of kicks, one timer) share one pass. While stopped the
   * queue still keeps requeues and back-offs, so that reconcileOnce() alone honours them; they are
   * taken once the loop starts.
   */
  private wake(): void {
    if (this.stopped || this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (!this.stopped) {
        const keys = this.queue.take();
        if (keys.length === 0) break;
        const every = keys.includes(EVERY_SANDBOX);
        const only = every ? undefined : new Set(keys.filter((key): key is string => typeof key === 'string'));
        try {
          await this.exclusive(() => this.pass(only));
          this.queue.forget(EVERY_SANDBOX);
        } catch (error) {
          this.passFailed(error);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** The engine or the database did not answer: keep the last known statuses, try again later. */
  private passFailed(error: unknown): void {
    this.metrics?.countReconcileError();
    if (error instanceof RuntimeError && !error.final) this.health.lost(error.message);
    const delay = this.queue.addRateLimited(EVERY_SANDBOX);
    this.log.warn({ err: error, retryInMs: delay }, 'reconcile pass failed');
  }

  private async pass(requested: Set<string> | undefined): Promise<void> {
    // Back from an engine outage, every sandbox is looked at: the engine stopped all their containers.
    const engineLostAt = this.health.lostAt;
    const only = engineLostAt === undefined ? requested : undefined;
    // A hold (holds.ts) acknowledged here is honoured from this pass on. A full pass acknowledges
    // first (a holder waits for no engine call); a kick's pass, while the engine lists.
    const holds = acknowledgeHolds(this.db, this.engine, only);
    if (!only) await holds;
    // A full pass lists before reading rows: every container or network listed was created from a
    // row committed earlier, so a fresh sandbox is never mistaken for an orphan. A pass over a few
    // sandboxes sweeps no orphans: it reads their rows while the engine lists their containers.
    const listedAt = Date.now();
    const started = performance.now();
    const rowsReading = only ? loadRows(this.db, this.engine, only) : undefined;
    const [held, observed, rowsRead] = await Promise.all([holds, listContainers(this.runtime, only), rowsReading]);
    if (engineLostAt !== undefined) await requireNewConnections(this.runtime);
    // It answered, unless it was found gone while it did; the rest of the pass is the database's.
    this.health.answered(engineLostAt);
    const leftovers = only ? undefined : await this.leftovers.list();
    const entries = rowsRead ?? (await loadRows(this.db, this.engine, only));
    if (!only) await applyPoliciesToPass(this.db, entries, this.askAgentIdle, this.log);

    const containers = bySandbox(observed);
    await this.evented.inspect(entries, containers);
    if (engineLostAt === undefined && exitedWhileWanted(entries, containers)) await requireNewConnections(this.runtime);
    if (!only && !this.stopped) this.diskWatch.maybeCheck(entries, containers);
    const byEngine = engineLostAt === undefined ? new Set<string>() : await stoppedByEngine(this.runtime, entries, containers, engineLostAt);
    const unheld = entries.filter((entry) => !held.has(entry.row.id));
    await forEachLimited(unheld, PASS_CONCURRENCY, (entry) =>
      this.reconcileRow(entry, containers.get(entry.row.id) ?? [], byEngine.has(entry.row.id), listedAt),
    );
    if (leftovers) await this.leftovers.sweep(leftovers, observed, new Set(entries.map((e) => e.row.id)), held.size > 0);
    if (this.health.recovered(engineLostAt)) this.log.info({ sandboxes: byEngine.size }, 'engine is back; starting the sandboxes it stopped');
    this.metrics?.observeReconcile((performance.now() - started) / 1000);
  }

  /** False from when the engine was found gone until a pass succeeds against it again. */
  engineAvailable(): boolean {
    return this.health.available();
  }

  /** Calls `listener` after each write of a sandbox's observed state (the proxy drops its cached target). */
  onSandboxWritten(listener: (sandboxId: string) => void): () => void {
    this.writeListeners.add(listener);
    return () => this.writeListeners.delete(listener);
  }

  private notifyWritten(sandboxId: string): void {
    for (const listener of this.writeListeners) listener(sandboxId);
  }

  private async reconcileRow(entry: RowWithSpec, containers: ContainerObservation[], stoppedByEngine: boolean, listedAt: number): Promise<void> {
    const { row } = entry;
    // A sandbox backing off waits out its back-off whoever asks, so a burst of events cannot
    // hammer a failing engine; the queue holds it until then.
    const backoffMs = this.queue.backoffRemainingMs(row.id);
    if (backoffMs > 0) return this.queue.addAfter(row.id, backoffMs);

    const now = Date.now();
    const create = this.creates.view(row.id, listedAt, now, containers.length > 0);
    const result = await reconcileSandbox({ ...entry, containers, create, stoppedByEngine }, this.passContext);
    observeArrival(this.metrics, row, result.status, now);

    if (result.error) {
      this.metrics?.countReconcileError();
      const delay = this.queue.addRateLimited(row.id);
      this.log.warn({ sandboxId: row.id, err: result.error, retryInMs: delay }, 'sandbox step failed; backing off');
      return;
    }
    this.queue.forget(row.id);
    if (result.requeueAfterMs !== undefined) this.queue.addAfter(row.id, result.requeueAfterMs);
  }
}
