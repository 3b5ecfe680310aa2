import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { type SandboxRow, type SandboxSpecRow, sandboxes, sandboxSpecs } from '../db/schema.js';
import type { SandboxMetrics } from '../../http/metrics/index.js';
import { type Logger, logger } from '../../logger.js';
import { type ContainerObservation, type ContainerRequest, RuntimeError, type SandboxRuntime } from '../runtime/runtime.js';
import { checkAgentServerAlive } from './alive.js';
import { dataVolumeNameFor } from './container-request.js';
import { CreatesInFlight } from './creates-in-flight.js';
import { createLimiter, forEachLimited } from './limit.js';
import { applyPolicies } from './policies.js';
import { reconcileSandbox, type SandboxPassContext } from './reconcile-sandbox.js';

export interface ReconcilerOptions {
  db: Database;
  runtime: SandboxRuntime;
  /** Only containers carrying this instance label are ours (the runtime filters by it). */
  instanceId: string;
  /** Sweep of every sandbox, besides kicks and runtime events. Default 5 s. */
  intervalMs?: number;
  /** How long a container no live row claims is left alone before it is removed. Default 60 s. */
  orphanGraceMs?: number;
  /** Whether the agent-server at `url` (its base URL) answers; default GET <url>/alive. */
  checkAlive?: (url: string, sessionApiKey: string) => Promise<boolean>;
  /** Where the sandbox's data volume is mounted; the agent-server's --data-dir. Default /data. */
  dataMountPath?: string;
  /** Pass durations, failures, and start / resume latencies, for /metrics. */
  metrics?: SandboxMetrics;
}

/**
 * Engine calls that change things, in flight at once: enough to overlap I/O, few enough not to
 * swamp a 2-core engine. Creates (the slow ones) have their own slots so that fifty sandboxes
 * starting together do not hold up a pause; listings and inspects are reads and are not limited.
 */
const CREATE_CONCURRENCY = 4;
const CHANGE_CONCURRENCY = 4;
/** Sandboxes handled at once within a pass (alive checks are cheap; runtime calls are limited above). */
const PASS_CONCURRENCY = 8;
/** A create that has not settled after this long is forgotten (the engine may have hung). */
const CREATE_MEMORY_MS = 60_000;
/** Waiting for /alive: every 100 ms for the first 3 s, then every second. */
const ALIVE_FAST_CHECKS = 30;
const ALIVE_FAST_MS = 100;
const ALIVE_SLOW_MS = 1_000;
/** How long stop() waits for the work under way. */
const STOP_WAIT_MS = 10_000;
/** Retryable failures back off from 500 ms, doubling, up to 30 s. */
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 30_000;

interface RowWithSpec {
  row: SandboxRow;
  spec: SandboxSpecRow | undefined;
}

/**
 * Converges every live sandbox row toward its desired state. Passes never overlap: kicks, runtime
 * events, requeues and the interval only mark work, and one pass at a time takes it. Creates run in
 * the background (they are the slow step), remembered in CreatesInFlight until a listing shows them.
 */
export class Reconciler {
  private readonly db: Database;
  private readonly runtime: SandboxRuntime;
  private readonly intervalMs: number;
  private readonly orphanGraceMs: number;
  private readonly checkAlive: (url: string, sessionApiKey: string) => Promise<boolean>;
  private readonly dataMountPath: string;
  private readonly log: Logger;
  private readonly metrics: SandboxMetrics | undefined;

  private readonly creates = new CreatesInFlight(CREATE_MEMORY_MS);
  private readonly pendingCreates = new Set<Promise<void>>();
  /** Orphaned container id -> when a pass first saw it. */
  private readonly orphansSeenAt = new Map<string, number>();
  private readonly backoff = new Map<string, { attempts: number; until: number }>();
  /** Consecutive passes that found the sandbox still waiting for /alive. */
  private readonly aliveChecks = new Map<string, number>();

  private stopped = true;
  private stopWatching: (() => void) | undefined;
  private interval: NodeJS.Timeout | undefined;
  private pendingFull = false;
  private readonly pendingIds = new Set<string>();
  private wakeScheduled = false;
  private draining = false;
  private passFailures = 0;
  /** sandbox id -> when it is due for another look. */
  private readonly due = new Map<string, number>();
  private dueTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Serializes passes: reconcileOnce() and the loop's own passes queue here. */
  private passes: Promise<void> = Promise.resolve();

  constructor(options: ReconcilerOptions) {
    this.db = options.db;
    this.runtime = limitRuntime(options.runtime, createLimiter(CREATE_CONCURRENCY), createLimiter(CHANGE_CONCURRENCY));
    this.intervalMs = options.intervalMs ?? 5_000;
    this.orphanGraceMs = options.orphanGraceMs ?? 60_000;
    this.checkAlive = options.checkAlive ?? checkAgentServerAlive;
    this.dataMountPath = options.dataMountPath ?? '/data';
    this.log = logger.child({ component: 'reconciler', instanceId: options.instanceId });
    this.metrics = options.metrics;
  }

  /** Adopts what the runtime already runs (one full pass), then follows events and the interval. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.stopWatching = this.runtime.watch((event) => this.kick(event.sandboxId || undefined));
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
    if (sandboxId === undefined) this.pendingFull = true;
    else this.pendingIds.add(sandboxId);
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      void this.drain();
    });
  }

  /**
   * Stops following events and timers, then waits for the pass and the creates under way, for a
   * bounded time: a hung engine must not hang shutdown, and whatever lands later is adopted at the
   * next start.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopWatching?.();
    clearInterval(this.interval);
    clearTimeout(this.dueTimer);
    clearTimeout(this.retryTimer);
    this.due.clear();
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, STOP_WAIT_MS).unref();
    });
    const drained = (async () => {
      await this.passes;
      // Read after the pass: it may have started creates of its own.
      await Promise.allSettled([...this.pendingCreates]);
    })();
    await Promise.race([drained, gaveUp]);
    clearTimeout(timer);
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

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (!this.stopped && (this.pendingFull || this.pendingIds.size > 0)) {
        const only = this.pendingFull ? undefined : new Set(this.pendingIds);
        this.pendingFull = false;
        this.pendingIds.clear();
        try {
          await this.exclusive(() => this.pass(only));
          this.passFailures = 0;
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
    this.passFailures++;
    this.metrics?.countReconcileError();
    const delay = backoffDelay(this.passFailures);
    this.log.warn({ err: error, retryInMs: delay }, 'reconcile pass failed');
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.kick(), delay).unref();
  }

  private async pass(only: Set<string> | undefined): Promise<void> {
    // List before reading rows: every container listed was created from a row committed earlier,
    // so the rows read next include it and a fresh sandbox is never mistaken for an orphan.
    const listedAt = Date.now();
    const started = performance.now();
    const observed = await this.runtime.list();
    const entries = await this.loadRows(only);
    if (!only) await this.applyPolicies(entries);

    const bySandbox = new Map<string, ContainerObservation[]>();
    for (const container of observed) {
      const list = bySandbox.get(container.sandboxId) ?? [];
      list.push(container);
      bySandbox.set(container.sandboxId, list);
    }
    const context: SandboxPassContext = {
      db: this.db,
      runtime: this.runtime,
      checkAlive: this.checkAlive,
      startCreate: (request) => this.startCreate(request),
      dataMountPath: this.dataMountPath,
    };
    await forEachLimited(entries, PASS_CONCURRENCY, (entry) => this.reconcileRow(entry, bySandbox.get(entry.row.id) ?? [], listedAt, context));
    if (!only) await this.removeOrphans(observed, new Set(entries.map((e) => e.row.id)));
    this.metrics?.observeReconcile((performance.now() - started) / 1000);
  }

  private async loadRows(only: Set<string> | undefined): Promise<RowWithSpec[]> {
    if (only?.size === 0) return [];
    const live = isNull(sandboxes.deletedAt);
    const rows = await this.db
      .select({ row: sandboxes, spec: sandboxSpecs })
      .from(sandboxes)
      .leftJoin(sandboxSpecs, eq(sandboxes.specId, sandboxSpecs.id))
      .where(only ? and(live, inArray(sandboxes.id, [...only])) : live);
    return rows.map(({ row, spec }) => ({ row, spec: spec ?? undefined }));
  }

  private async applyPolicies(entries: RowWithSpec[]): Promise<void> {
    const applied = await applyPolicies(this.db, entries, new Date());
    for (const decision of applied) {
      this.log.info(decision, 'policy changed desired state');
      const entry = entries.find((e) => e.row.id === decision.sandboxId);
      if (entry) entry.row = { ...entry.row, desiredState: decision.desired };
    }
  }

  private async reconcileRow(entry: RowWithSpec, containers: ContainerObservation[], listedAt: number, context: SandboxPassContext): Promise<void> {
    const { row } = entry;
    const now = Date.now();
    const backoff = this.backoff.get(row.id);
    if (backoff && backoff.until > now) return this.requeue(row.id, backoff.until - now);

    const create = this.creates.view(row.id, listedAt, now, containers.length > 0);
    const result = await reconcileSandbox({ ...entry, containers, create }, context);
    this.observeArrival(row, result.status, now);

    if (result.retryableError) {
      this.metrics?.countReconcileError();
      const attempts = (backoff?.attempts ?? 0) + 1;
      const delay = backoffDelay(attempts);
      this.log.warn({ sandboxId: row.id, err: result.retryableError, retryInMs: delay }, 'sandbox step failed; backing off');
      this.backoff.set(row.id, { attempts, until: now + delay });
      return this.requeue(row.id, delay);
    }
    this.backoff.delete(row.id);
    if (result.recheckSoon) {
      const checks = (this.aliveChecks.get(row.id) ?? 0) + 1;
      this.aliveChecks.set(row.id, checks);
      this.requeue(row.id, checks <= ALIVE_FAST_CHECKS ? ALIVE_FAST_MS : ALIVE_SLOW_MS);
    } else {
      this.aliveChecks.delete(row.id);
    }
  }

  /**
   * Start latency runs from the sandbox's creation, resume latency from the request to resume
   * (the last write of the row before the reconciler saw it), both to the first RUNNING.
   */
  private observeArrival(row: SandboxRow, status: string, now: number): void {
    if (status !== 'RUNNING' || row.status === 'RUNNING') return;
    if (row.status === 'STARTING') this.metrics?.observeStart((now - row.createdAt.getTime()) / 1000);
    if (row.status === 'PAUSED') this.metrics?.observeResume((now - row.updatedAt.getTime()) / 1000);
  }

  private startCreate(request: ContainerRequest): void {
    const { sandboxId } = request;
    this.creates.begin(sandboxId, Date.now());
    const settled = this.runtime.create(request).then(
      (container) => this.creates.settle(sandboxId, Date.now(), { containerId: container.containerId }),
      (error: unknown) => {
        const runtimeError = error instanceof RuntimeError ? error : new RuntimeError(String(error), false);
        this.creates.settle(sandboxId, Date.now(), { error: runtimeError });
      },
    );
    const tracked = settled.finally(() => {
      this.pendingCreates.delete(tracked);
      this.kick(sandboxId);
    });
    this.pendingCreates.add(tracked);
  }

  /** Containers with our instance label that no live row claims, removed once the grace is over. */
  private async removeOrphans(observed: ContainerObservation[], liveIds: Set<string>): Promise<void> {
    const now = Date.now();
    const orphans = observed.filter((c) => !liveIds.has(c.sandboxId));
    const orphanIds = new Set(orphans.map((c) => c.containerId));
    for (const containerId of this.orphansSeenAt.keys()) if (!orphanIds.has(containerId)) this.orphansSeenAt.delete(containerId);
    await forEachLimited(orphans, PASS_CONCURRENCY, async (orphan) => {
      const seenAt = this.orphansSeenAt.get(orphan.containerId) ?? now;
      this.orphansSeenAt.set(orphan.containerId, seenAt);
      if (now - seenAt < this.orphanGraceMs) return;
      try {
        await this.runtime.remove(orphan.containerId);
        if (orphan.sandboxId) await this.runtime.removeVolume(dataVolumeNameFor(orphan.sandboxId));
        this.orphansSeenAt.delete(orphan.containerId);
        this.log.info({ containerId: orphan.containerId, sandboxId: orphan.sandboxId }, 'removed orphaned container');
      } catch (error) {
        this.log.warn({ containerId: orphan.containerId, err: error }, 'could not remove orphaned container');
      }
    });
  }

  private requeue(sandboxId: string, delayMs: number): void {
    if (this.stopped) return;
    const at = Date.now() + delayMs;
    const current = this.due.get(sandboxId);
    if (current !== undefined && current <= at) return;
    this.due.set(sandboxId, at);
    this.armDueTimer();
  }

  private armDueTimer(): void {
    clearTimeout(this.dueTimer);
    if (this.due.size === 0 || this.stopped) return;
    const next = Math.min(...this.due.values());
    this.dueTimer = setTimeout(() => {
      const now = Date.now();
      for (const [sandboxId, at] of this.due) {
        if (at > now) continue;
        this.due.delete(sandboxId);
        this.kick(sandboxId);
      }
      this.armDueTimer();
    }, Math.max(0, next - Date.now())).unref();
  }
}

function backoffDelay(attempts: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** (attempts - 1), BACKOFF_MAX_MS);
}

type Limit = <T>(task: () => Promise<T>) => Promise<T>;

/** The same runtime with creates and other changes queued behind their limits. */
function limitRuntime(runtime: SandboxRuntime, limitCreate: Limit, limit: Limit): SandboxRuntime {
  return {
    create: (request) => limitCreate(() => runtime.create(request)),
    start: (containerId) => limit(() => runtime.start(containerId)),
    pause: (containerId) => limit(() => runtime.pause(containerId)),
    unpause: (containerId) => limit(() => runtime.unpause(containerId)),
    remove: (containerId) => limit(() => runtime.remove(containerId)),
    removeVolume: (name) => limit(() => runtime.removeVolume(name)),
    list: () => runtime.list(),
    inspect: (containerId) => runtime.inspect(containerId),
    watch: (onEvent) => runtime.watch(onEvent),
  };
}
