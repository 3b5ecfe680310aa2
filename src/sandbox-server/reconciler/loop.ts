import { and, eq, inArray, isNull } from 'drizzle-orm';
import { LOCAL_ENGINE } from '../../contracts/engine.js';
import type { Database } from '../db/client.js';
import { adoptedInstallations, type SandboxRow, type SandboxSpecRow, sandboxes, sandboxSpecs, snapshots } from '../db/schema.js';
import type { SandboxMetrics } from '../../http/metrics/index.js';
import { type Logger, logger } from '../../logger.js';
import {
  type ContainerObservation,
  type ContainerRequest,
  ENGINE_DISCONNECTED,
  type RuntimeEvent,
  RuntimeError,
  type SandboxRuntime,
} from '../runtime/runtime.js';
import { checkAgentServerAlive } from '../agent-client.js';
import { acknowledgeHolds } from './holds.js';
import { AliveProbes } from './alive-probes.js';
import { CreatesInFlight } from './creates-in-flight.js';
import { createLimiter, forEachLimited } from './limit.js';
import { ForeignResourceReport, Ownership } from './foreign-resources.js';
import { OrphanSweeper } from './orphans.js';
import { applyPolicies } from './policies.js';
import { DiskWatch } from './disk-watch.js';
import { type AskAgentIdleMs, askAgentIdleMs } from './agent-idle.js';
import { reconcileSandbox, type SandboxPassContext } from './reconcile-sandbox.js';
import { WorkQueue } from './work-queue.js';

export interface ReconcilerOptions {
  db: Database;
  /** The engine this reconciler converges: only sandboxes and snapshots placed on it are its own. Default `local`. */
  engine?: string;
  /** Where that engine publishes sandbox ports. Default 127.0.0.1. */
  advertiseHost?: string;
  /**
   * Told when the engine stops answering (healthy false, with why) and when it answers again, and
   * every HEALTH_HEARTBEAT_MS while it answers; a rejection makes it told again after the next pass.
   */
  onHealth?: (healthy: boolean, detail: string | null) => Promise<void>;
  runtime: SandboxRuntime;
  /** Only containers carrying this instance label are ours (the runtime filters by it). */
  instanceId: string;
  /**
   * This installation's id (the runtime labels what it makes with it): sweeps remove only its own
   * leftovers and those of the installations it adopted. Unset (tests), resources carrying no
   * installation are its own.
   */
  installationId?: string;
  /** Sweep of every sandbox, besides kicks and runtime events. Default 5 s. */
  intervalMs?: number;
  /** How long a container no live row claims is left alone before it is removed. Default 60 s. */
  orphanGraceMs?: number;
  /** Whether the agent-server at `url` (its base URL) answers; default GET <url>/alive. */
  checkAlive?: (url: string, sessionApiKey: string) => Promise<boolean>;
  /** How long a sandbox's agent did no work, asked before idle auto-pause; default its /server_info idle_time. */
  askAgentIdle?: AskAgentIdleMs;
  /** Where the sandbox's data volume is mounted; the agent-server's --data-dir. Default /data. */
  dataMountPath?: string;
  /** Pass durations, failures, and start / resume latencies, for /metrics. */
  metrics?: SandboxMetrics;
  /** A running sandbox whose agent-server does not answer /alive for this long is ERROR. Default 300 s. */
  startTimeoutMs?: number;
  /** How often running sandboxes with a disk limit are measured (disk-watch.ts). Default 10 s. */
  diskCheckIntervalMs?: number;
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
/** Container events after which the engine's listing may still show the state before them. */
const LISTING_LAGS = new Set(['die', 'oom', 'stop', 'kill', 'pause', 'unpause', 'destroy']);
/** A healthy engine's last-seen time is written at most this often. */
const HEALTH_HEARTBEAT_MS = 30_000;
/** How long stop() waits for the work under way. */
const STOP_WAIT_MS = 10_000;
/** Retryable failures back off from 500 ms, doubling, up to 30 s. */
const BACKOFF = { baseMs: 500, maxMs: 30_000 };

/**
 * An engine shutting down stops its containers before its API goes away (Docker gives each up to
 * 10 s, then kills it): containers that finished this long before the engine was found gone, or
 * later, were stopped by the engine rather than by a crash of their own.
 */
const ENGINE_SHUTDOWN_WINDOW_MS = 30_000;

/** The queue's key for a pass over every sandbox (plus policies and orphans). */
const EVERY_SANDBOX = Symbol('every sandbox');
type WorkKey = string | typeof EVERY_SANDBOX;

interface RowWithSpec {
  row: SandboxRow;
  spec: SandboxSpecRow | undefined;
}

/**
 * Converges every live sandbox row of one engine toward its desired state. Passes never overlap: kicks, runtime
 * events, requeues and the interval only add keys to the work queue, and one pass at a time takes
 * every ready key. Creates run in the background (they are the slow step), remembered in
 * CreatesInFlight until a listing shows them.
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
  private readonly creates = new CreatesInFlight(CREATE_MEMORY_MS);
  private readonly pendingCreates = new Set<Promise<void>>();
  private readonly orphans: OrphanSweeper;
  private readonly ownership: Ownership;
  private readonly diskWatch: DiskWatch;
  private readonly writeListeners = new Set<(sandboxId: string) => void>();
  private readonly aliveProbes: AliveProbes;

  private stopped = true;
  private stopWatching: (() => void) | undefined;
  private interval: NodeJS.Timeout | undefined;
  private wakeScheduled = false;
  private draining = false;
  /** Containers named by runtime events since a pass last looked at their sandbox, by sandbox. */
  private readonly evented = new Map<string, Set<string>>();
  /** When the engine was last found gone (its event stream ended, or it did not answer a listing). */
  private engineLostAt: number | undefined;
  private readonly onHealth: ReconcilerOptions['onHealth'];
  private readonly askAgentIdle: AskAgentIdleMs;
  /** The health last reported (undefined: not yet, or the report failed), and when. */
  private reportedHealthy: boolean | undefined;
  private reportedAt = 0;
  /** Serializes passes: reconcileOnce() and the loop's own passes queue here. */
  private passes: Promise<void> = Promise.resolve();

  constructor(options: ReconcilerOptions) {
    this.db = options.db;
    this.engine = options.engine ?? LOCAL_ENGINE;
    this.runtime = limitRuntime(options.runtime, createLimiter(CREATE_CONCURRENCY), createLimiter(CHANGE_CONCURRENCY));
    this.intervalMs = options.intervalMs ?? 5_000;
    this.log = logger.child({ component: 'reconciler', instanceId: options.instanceId, engine: this.engine });
    this.metrics = options.metrics;
    this.onHealth = options.onHealth;
    this.askAgentIdle = options.askAgentIdle ?? askAgentIdleMs;
    const checkAlive = options.checkAlive ?? checkAgentServerAlive;
    this.aliveProbes = new AliveProbes(checkAlive, (sandboxId) => this.kick(sandboxId));
    this.passContext = {
      db: this.db,
      log: this.log,
      runtime: this.runtime,
      checkAlive,
      advertiseHost: options.advertiseHost ?? '127.0.0.1',
      startCreate: (request) => this.startCreate(request),
      dataMountPath: options.dataMountPath ?? '/data',
      startTimeoutMs: options.startTimeoutMs ?? 300_000,
      written: (sandboxId) => this.notifyWritten(sandboxId),
      aliveAnswered: (sandboxId, containerId, url) => this.aliveProbes.answered(sandboxId, containerId, url),
      // Only a running loop probes: reconcileOnce() alone (tests, a stopped loop) asks once per pass.
      notAliveYet: (sandboxId, containerId, url, sessionApiKey) => {
        if (this.stopped) return false;
        this.aliveProbes.probe(sandboxId, containerId, url, sessionApiKey);
        return this.aliveProbes.probing(sandboxId);
      },
    };
    this.queue = new WorkQueue<WorkKey>({ onReady: () => this.wake(), backoff: BACKOFF });
    this.ownership = new Ownership(options.installationId);
    const foreign = new ForeignResourceReport(this.engine, this.log, this.metrics);
    this.orphans = new OrphanSweeper(this.runtime, options.orphanGraceMs ?? 60_000, this.log, this.ownership, foreign);
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
    // A replica taking the engine over reports what it finds, whatever was reported before.
    this.reportedHealthy = undefined;
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

  /**
   * The engine's listing can lag its events (a container listed as running after its `die`), so the
   * containers such an event names are inspected by the pass it triggers instead of read from the
   * listing. Only events of a container that stopped or froze: an inspect waits for a container
   * being started, which under gVisor takes a second or two, and a burst's passes each waited that
   * long for the `create` and `start` events of the containers still starting.
   */
  private onRuntimeEvent(event: RuntimeEvent): void {
    if (event.action === ENGINE_DISCONNECTED) {
      this.engineLostAt ??= Date.now();
      this.reportHealth(false, 'its event stream ended');
    }
    if (!event.sandboxId) return this.kick();
    if (event.containerId && LISTING_LAGS.has(event.action)) {
      const containers = this.evented.get(event.sandboxId) ?? new Set<string>();
      containers.add(event.containerId);
      this.evented.set(event.sandboxId, containers);
    }
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
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, STOP_WAIT_MS).unref();
    });
    const drained = (async () => {
      await this.diskWatch.settled();
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
    if (error instanceof RuntimeError && !error.final) {
      this.engineLostAt ??= Date.now();
      this.reportHealth(false, error.message);
    }
    const delay = this.queue.addRateLimited(EVERY_SANDBOX);
    this.log.warn({ err: error, retryInMs: delay }, 'reconcile pass failed');
  }

  private async pass(requested: Set<string> | undefined): Promise<void> {
    // Back from an engine outage, every sandbox is looked at: the engine stopped all their containers.
    const engineLostAt = this.engineLostAt;
    const only = engineLostAt === undefined ? requested : undefined;
    // First, so that a holder waits for no engine call: a hold (holds.ts) acknowledged here is
    // honoured by this pass and every later one.
    const held = await acknowledgeHolds(this.db, this.engine, only);
    // A full pass lists before reading rows: every container or network listed was created from a
    // row committed earlier, so the rows read next include it and a fresh sandbox is never mistaken
    // for an orphan. A pass over a few sandboxes sweeps no orphans: it reads their rows while the
    // engine lists their containers.
    const listedAt = Date.now();
    const started = performance.now();
    const [observed, rowsRead] = await Promise.all([this.listContainers(only), only ? this.loadRows(only) : undefined]);
    // It answered, unless it was found gone while it did; the rest of the pass is the database's.
    if (this.engineLostAt === engineLostAt) this.reportHealth(true, null);
    const networks = only ? [] : await this.runtime.listNetworks();
    const copies = only ? [] : await this.runtime.listVolumeCopies();
    const unusedVolumes = only ? [] : await this.runtime.listUnusedVolumes();
    const entries = rowsRead ?? (await this.loadRows(only));
    if (!only) await this.applyPolicies(entries);

    const bySandbox = new Map<string, ContainerObservation[]>();
    for (const container of observed) {
      const list = bySandbox.get(container.sandboxId) ?? [];
      list.push(container);
      bySandbox.set(container.sandboxId, list);
    }
    await this.inspectEvented(entries, bySandbox);
    if (!only && !this.stopped) this.diskWatch.maybeCheck(entries, bySandbox);
    const stoppedByEngine = engineLostAt === undefined ? new Set<string>() : await this.stoppedByEngine(entries, bySandbox, engineLostAt);
    const unheld = entries.filter((entry) => !held.has(entry.row.id));
    await forEachLimited(unheld, PASS_CONCURRENCY, (entry) =>
      this.reconcileRow(entry, bySandbox.get(entry.row.id) ?? [], stoppedByEngine.has(entry.row.id), listedAt),
    );
    if (!only) {
      this.ownership.adopt(new Set((await this.db.select().from(adoptedInstallations)).map((row) => row.installation)));
      const liveIds = new Set(entries.map((e) => e.row.id));
      await this.orphans.sweep(observed, networks, liveIds, Date.now());
      await this.orphans.sweepVolumes(copies, unusedVolumes, liveIds, Date.now());
    }
    if (!only && held.size === 0) await this.sweepSnapshots();
    // Recovered, unless the engine went away again during this pass.
    if (engineLostAt !== undefined && this.engineLostAt === engineLostAt) {
      this.engineLostAt = undefined;
      this.log.info({ sandboxes: stoppedByEngine.size }, 'engine is back; starting the sandboxes it stopped');
    }
    this.metrics?.observeReconcile((performance.now() - started) / 1000);
  }

  /**
   * Snapshot artifacts no row claims: left by a snapshot that failed between the engine and the
   * database, or by a deletion whose removal failed. Not called while any sandbox is held, since a
   * snapshot under way has artifacts before it has its row; listed before the rows are read, as
   * containers are. Its failures are only logged: they must not hold up the sandboxes' pass.
   */
  private async sweepSnapshots(): Promise<void> {
    try {
      const observed = await this.runtime.listSnapshots();
      const rows = await this.db.select({ id: snapshots.id }).from(snapshots).where(eq(snapshots.engine, this.engine));
      await this.orphans.sweepSnapshots(observed, new Set(rows.map((row) => row.id)), Date.now());
    } catch (error) {
      this.log.warn({ err: error }, 'could not sweep snapshots');
    }
  }

  /** Replaces the listing of each sandbox an event named by a fresh inspect of its containers. */
  private async inspectEvented(entries: RowWithSpec[], bySandbox: Map<string, ContainerObservation[]>): Promise<void> {
    const stale = entries.map((e) => e.row.id).filter((id) => this.evented.has(id));
    await forEachLimited(stale, PASS_CONCURRENCY, async (sandboxId) => {
      const named = this.evented.get(sandboxId) ?? new Set<string>();
      this.evented.delete(sandboxId);
      const ids = new Set([...named, ...(bySandbox.get(sandboxId) ?? []).map((c) => c.containerId)]);
      const inspected = await Promise.all([...ids].map((id) => this.runtime.inspect(id)));
      bySandbox.set(
        sandboxId,
        inspected.filter((c): c is ContainerObservation => c !== undefined && c.sandboxId === sandboxId),
      );
    });
  }

  /** Sandboxes wanted running whose container finished around the time the engine went away. */
  private async stoppedByEngine(entries: RowWithSpec[], bySandbox: Map<string, ContainerObservation[]>, lostAt: number): Promise<Set<string>> {
    const stopped = new Set<string>();
    const candidates = entries.filter(({ row }) => {
      const containers = bySandbox.get(row.id) ?? [];
      return row.desiredState === 'RUNNING' && containers.length === 1 && containers[0]?.state === 'exited';
    });
    await forEachLimited(candidates, PASS_CONCURRENCY, async ({ row }) => {
      const listed = bySandbox.get(row.id)?.[0];
      const container = listed && (await this.runtime.inspect(listed.containerId));
      if (container?.finishedAt != null && container.finishedAt >= lostAt - ENGINE_SHUTDOWN_WINDOW_MS) stopped.add(row.id);
    });
    return stopped;
  }

  /**
   * Reports a change of the engine's health at once; a healthy engine is also reported every
   * HEALTH_HEARTBEAT_MS, which keeps its last-seen time fresh without a write per pass.
   */
  private reportHealth(healthy: boolean, detail: string | null): void {
    const now = Date.now();
    if (!this.onHealth || this.stopped) return;
    if (this.reportedHealthy === healthy && (!healthy || now - this.reportedAt < HEALTH_HEARTBEAT_MS)) return;
    this.reportedHealthy = healthy;
    this.reportedAt = now;
    this.onHealth(healthy, detail).catch((err: unknown) => {
      this.reportedHealthy = undefined;
      this.log.warn({ err, healthy }, 'engine health could not be recorded; retrying after the next pass');
    });
  }

  /** False from when the engine was found gone until a pass succeeds against it again. */
  engineAvailable(): boolean {
    return this.engineLostAt === undefined;
  }

  /** Calls `listener` after each write of a sandbox's observed state (the proxy drops its cached target). */
  onSandboxWritten(listener: (sandboxId: string) => void): () => void {
    this.writeListeners.add(listener);
    return () => this.writeListeners.delete(listener);
  }

  private notifyWritten(sandboxId: string): void {
    for (const listener of this.writeListeners) listener(sandboxId);
  }

  /**
   * A pass over a few sandboxes lists only their containers, each sandbox's filtered by the engine:
   * a kick need not have the engine describe every container it runs.
   */
  private async listContainers(only: Set<string> | undefined): Promise<ContainerObservation[]> {
    if (only === undefined || only.size > PASS_CONCURRENCY) return this.runtime.list();
    return (await Promise.all([...only].map((sandboxId) => this.runtime.list(sandboxId)))).flat();
  }

  private async loadRows(only: Set<string> | undefined): Promise<RowWithSpec[]> {
    if (only?.size === 0) return [];
    const live = and(eq(sandboxes.engine, this.engine), isNull(sandboxes.deletedAt));
    const rows = await this.db
      .select({ row: sandboxes, spec: sandboxSpecs })
      .from(sandboxes)
      .leftJoin(sandboxSpecs, eq(sandboxes.specId, sandboxSpecs.id))
      .where(only ? and(live, inArray(sandboxes.id, [...only])) : live);
    return rows.map(({ row, spec }) => ({ row, spec: spec ?? undefined }));
  }

  private async applyPolicies(entries: RowWithSpec[]): Promise<void> {
    const applied = await applyPolicies(this.db, entries, new Date(), this.askAgentIdle);
    for (const decision of applied) {
      this.log.info(decision, 'policy changed desired state');
      const entry = entries.find((e) => e.row.id === decision.sandboxId);
      if (entry) entry.row = { ...entry.row, desiredState: decision.desired };
    }
  }

  private async reconcileRow(
    entry: RowWithSpec,
    containers: ContainerObservation[],
    stoppedByEngine: boolean,
    listedAt: number,
  ): Promise<void> {
    const { row } = entry;
    // A sandbox backing off waits out its back-off whoever asks, so a burst of events cannot
    // hammer a failing engine; the queue holds it until then.
    const backoffMs = this.queue.backoffRemainingMs(row.id);
    if (backoffMs > 0) return this.queue.addAfter(row.id, backoffMs);

    const now = Date.now();
    const create = this.creates.view(row.id, listedAt, now, containers.length > 0);
    const result = await reconcileSandbox({ ...entry, containers, create, stoppedByEngine }, this.passContext);
    this.observeArrival(row, result.status, now);

    if (result.error) {
      this.metrics?.countReconcileError();
      const delay = this.queue.addRateLimited(row.id);
      this.log.warn({ sandboxId: row.id, err: result.error, retryInMs: delay }, 'sandbox step failed; backing off');
      return;
    }
    this.queue.forget(row.id);
    if (result.requeueAfterMs !== undefined) this.queue.addAfter(row.id, result.requeueAfterMs);
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
}

type Limit = <T>(task: () => Promise<T>) => Promise<T>;

/** The same runtime with creates and other changes queued behind their limits. */
function limitRuntime(runtime: SandboxRuntime, limitCreate: Limit, limit: Limit): SandboxRuntime {
  return {
    runtimes: () => runtime.runtimes(),
    probeRuntime: (oci, image) => runtime.probeRuntime(oci, image),
    imageId: (image) => runtime.imageId(image),
    create: (request) => limitCreate(() => runtime.create(request)),
    start: (containerId) => limit(() => runtime.start(containerId)),
    pause: (containerId) => limit(() => runtime.pause(containerId)),
    stop: (containerId) => limit(() => runtime.stop(containerId)),
    diskUsage: (containerId, dataMountPath) => runtime.diskUsage(containerId, dataMountPath),
    unpause: (containerId) => limit(() => runtime.unpause(containerId)),
    remove: (containerId) => limit(() => runtime.remove(containerId)),
    removeVolume: (name) => limit(() => runtime.removeVolume(name)),
    removeNetworks: (sandboxId) => limit(() => runtime.removeNetworks(sandboxId)),
    removeNetwork: (name) => limit(() => runtime.removeNetwork(name)),
    listNetworks: () => runtime.listNetworks(),
    listUnusedVolumes: () => runtime.listUnusedVolumes(),
    listVolumeCopies: () => runtime.listVolumeCopies(),
    list: (sandboxId) => runtime.list(sandboxId),
    inspect: (containerId) => runtime.inspect(containerId),
    logs: (containerId, lines) => runtime.logs(containerId, lines),
    snapshot: (request) => limit(() => runtime.snapshot(request)),
    restoreVolume: (snapshot, target) => limit(() => runtime.restoreVolume(snapshot, target)),
    removeSnapshot: (snapshot) => limit(() => runtime.removeSnapshot(snapshot)),
    listSnapshots: () => runtime.listSnapshots(),
    watch: (onEvent) => runtime.watch(onEvent),
    close: () => runtime.close(),
  };
}
