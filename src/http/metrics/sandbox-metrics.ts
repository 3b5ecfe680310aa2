import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** How many sandboxes are in each observed status, e.g. `{ RUNNING: 3, PAUSED: 1 }`. */
export type SandboxStatusCounts = Readonly<Record<string, number>>;

/** Per spec with a warm pool: members ready to claim, and live sandboxes that were claimed from it. */
export type WarmPoolCounts = Readonly<Record<string, { ready: number; claimed: number }>>;

/** Resources of other installations an engine's sweep found and left alone, e.g. `{ installation: 'legacy', kind: 'container', count: 2 }`. */
export type ForeignResourceCounts = readonly { installation: string; kind: string; count: number }[];

/**
 * What the control plane reports about sandboxes. The reconciler depends on this interface only, so
 * it neither imports prom-client nor needs a registry in its tests.
 */
export interface SandboxMetrics {
  /** A sandbox went from asked-to-start to RUNNING (health check answered) in this many seconds. */
  observeStart(seconds: number): void;
  /** A paused sandbox went back to RUNNING in this many seconds. */
  observeResume(seconds: number): void;
  /** One reconcile pass took this many seconds. */
  observeReconcile(seconds: number): void;
  /** A reconcile pass, or one sandbox's step in it, failed. */
  countReconcileError(): void;
  /**
   * Registers the function read at each scrape for the `sandboxes{status}` gauge. Counting on scrape
   * keeps the gauge exact without every status write having to update it. Return 0 for statuses
   * with no sandboxes so their series do not vanish.
   */
  setStatusCounts(read: () => SandboxStatusCounts | Promise<SandboxStatusCounts>): void;
  /** Registers the function read at each scrape for `sandboxes_by_agent_server_version{version}`. */
  setVersionCounts(read: () => Readonly<Record<string, number>> | Promise<Readonly<Record<string, number>>>): void;
  /** A start of a spec with a warm pool was served from it (hit) or cold (miss). */
  countWarmPoolClaim(specId: string, hit: boolean): void;
  /** Registers the function read at each scrape for `warm_pool_ready{spec}` and `warm_pool_claimed{spec}`. */
  setWarmPoolCounts(read: () => Promise<WarmPoolCounts>): void;
  /** What the last sweep of `engine` found of other installations' resources (the `sandbox_server_foreign_resources` gauge). */
  setForeignResources(engine: string, counts: ForeignResourceCounts): void;
}

/** Adds the control plane's sandbox metrics to `registry` (the one `createMetrics` made). */
export function createSandboxMetrics(registry: Registry): SandboxMetrics {
  let readStatusCounts: (() => SandboxStatusCounts | Promise<SandboxStatusCounts>) | undefined;
  let readVersionCounts: (() => Readonly<Record<string, number>> | Promise<Readonly<Record<string, number>>>) | undefined;
  let readWarmPoolCounts: (() => Promise<WarmPoolCounts>) | undefined;
  // One read serves both gauges of a scrape (prom-client collects them one after the other).
  let warmPoolScrape: Promise<WarmPoolCounts> | undefined;
  const warmPoolCounts = (): Promise<WarmPoolCounts> | undefined => {
    if (readWarmPoolCounts === undefined) return undefined;
    warmPoolScrape ??= readWarmPoolCounts().finally(() => setImmediate(() => (warmPoolScrape = undefined)));
    return warmPoolScrape;
  };
  const warmPoolGauge = (name: string, help: string, field: keyof WarmPoolCounts[string]): void => {
    new Gauge({
      name,
      help,
      labelNames: ['spec'],
      registers: [registry],
      async collect() {
        const counts = await warmPoolCounts();
        if (counts === undefined) return;
        this.reset();
        for (const [spec, count] of Object.entries(counts)) this.set({ spec }, count[field]);
      },
    });
  };
  warmPoolGauge('warm_pool_ready', 'Warm-pool sandboxes ready to be claimed, by spec', 'ready');
  warmPoolGauge('warm_pool_claimed', 'Live sandboxes that were claimed from a warm pool, by spec', 'claimed');
  const warmPoolHits = new Counter({
    name: 'warm_pool_hits_total',
    help: 'Starts served at once by a ready warm-pool sandbox, by spec',
    labelNames: ['spec'],
    registers: [registry],
  });
  const warmPoolMisses = new Counter({
    name: 'warm_pool_misses_total',
    help: 'Starts of a spec with a warm pool that found none ready and started cold, by spec',
    labelNames: ['spec'],
    registers: [registry],
  });
  // The registry keeps the gauge; it is only ever filled by its own collect().
  new Gauge({
    name: 'sandboxes',
    help: 'Sandboxes by observed status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      if (readStatusCounts === undefined) return;
      const counts = await readStatusCounts();
      this.reset();
      for (const [status, count] of Object.entries(counts)) this.set({ status }, count);
    },
  });
  // After an upgrade, shows how many sandboxes still run the previous agent-server.
  new Gauge({
    name: 'sandboxes_by_agent_server_version',
    help: 'Live sandboxes by the agent-server version their container runs',
    labelNames: ['version'],
    registers: [registry],
    async collect() {
      if (readVersionCounts === undefined) return;
      const counts = await readVersionCounts();
      this.reset();
      for (const [version, count] of Object.entries(counts)) this.set({ version }, count);
    },
  });
  const foreign = new Map<string, ForeignResourceCounts>();
  new Gauge({
    name: 'sandbox_server_foreign_resources',
    help: 'Containers, volumes, networks and snapshots of another installation (another database, or a release before the installation label) on an engine: left alone, see `sandbox-server resources`',
    labelNames: ['engine', 'installation', 'kind'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [engine, counts] of foreign) for (const { installation, kind, count } of counts) this.set({ engine, installation, kind }, count);
    },
  });
  const reconcileDuration = new Histogram({
    name: 'reconcile_duration_seconds',
    help: 'Duration of one reconcile pass',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const reconcileErrors = new Counter({
    name: 'reconcile_errors_total',
    help: 'Reconcile passes or sandbox steps that failed',
    registers: [registry],
  });
  // Starting includes creating the container and waiting for the agent-server's health check.
  const startDuration = new Histogram({
    name: 'sandbox_start_seconds',
    help: 'Time from a start request until the sandbox is RUNNING',
    buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120],
    registers: [registry],
  });
  const resumeDuration = new Histogram({
    name: 'sandbox_resume_seconds',
    help: 'Time from a resume request until the sandbox is RUNNING',
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [registry],
  });
  return {
    observeStart: (seconds) => startDuration.observe(seconds),
    observeResume: (seconds) => resumeDuration.observe(seconds),
    observeReconcile: (seconds) => reconcileDuration.observe(seconds),
    countReconcileError: () => reconcileErrors.inc(),
    setStatusCounts: (read) => {
      readStatusCounts = read;
    },
    setVersionCounts: (read) => {
      readVersionCounts = read;
    },
    countWarmPoolClaim: (spec, hit) => (hit ? warmPoolHits : warmPoolMisses).inc({ spec }),
    setWarmPoolCounts: (read) => {
      readWarmPoolCounts = read;
    },
    setForeignResources: (engine, counts) => foreign.set(engine, counts),
  };
}
