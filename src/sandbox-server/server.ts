import { randomBytes } from 'node:crypto';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { SANDBOX_STATUSES } from '../contracts/sandbox.js';
import { createMetrics, createSandboxMetrics } from '../http/metrics/index.js';
import { logger } from '../logger.js';
import { createSandboxServerApp } from './app.js';
import type { SandboxServerConfig } from './config.js';
import { type Database, openDatabase } from './db/client.js';
import { sandboxes } from './db/schema.js';
import { EventFeed } from './lifecycle-events/event-feed.js';
import { keepEventsFor } from './lifecycle-events/retention.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { ensureAgentServerImage } from './image/index.js';
import { holdSandbox, Reconciler, type ReconcilerOptions } from './reconciler/index.js';
import { handOff, KICK_CHANNEL, START_TASK_CHANNEL } from './replicas/hand-off.js';
import { LeaseKeeper } from './replicas/lease-keeper.js';
import { registerLeaseMetrics } from './replicas/lease-metrics.js';
import { chooseDefaultRuntime } from './runtime/default-runtime.js';
import { installFirewall } from './runtime/firewall.js';
import { createDockerRuntime, type SandboxRuntime } from './runtime/index.js';
import { countSandboxesByStatus } from './services/sandboxes/count-sandboxes-by-status.js';
import { ensureDefaultSandboxSpec } from './services/sandbox-specs/default-spec.js';
import { countSandboxesByAgentServerVersion } from './services/sandboxes/count-by-agent-server-version.js';
import { countWarmPools } from './services/sandboxes/count-warm-pools.js';

/** What the server talks to besides its database; tests pass a fake runtime and skip the image. */
export interface SandboxServerDependencies {
  runtime: SandboxRuntime;
  /** Makes the agent-server image exist (building it on first use). */
  ensureImage(): Promise<unknown>;
  /** How the reconciler asks a sandbox's agent-server whether it is up; default GET /alive. */
  checkAlive: ReconcilerOptions['checkAlive'];
}

export interface RunningSandboxServer {
  /** http://host:port actually listened on (PORT=0 picks a free port). */
  url: string;
  /**
   * Stops accepting connections, lets requests in flight finish, stops the reconciler and closes
   * the database. Containers keep running; the next start adopts them.
   */
  close(): Promise<void>;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Expired events are removed at start and then this often. */
const RETENTION_SWEEP_MS = 60 * 60 * 1000;

/**
 * The reconciler's lease lasts this long unrenewed (renewed every third of it): a replica that dies
 * holding it is replaced within this plus one renewal interval.
 */
const LEASE_TTL_MS = 6_000;
/** One engine today, so one reconciler and one lease; a fleet will have one per engine. */
const RECONCILER_LEASE = 'reconciler/local';

/** In-flight requests get this long to finish on shutdown before their connections are cut. */
const DRAIN_TIMEOUT_MS = 10_000;

/** Wires config -> database -> runtime -> reconciler -> HTTP app, and listens. */
export async function startSandboxServer(
  config: SandboxServerConfig,
  dependencies: Partial<SandboxServerDependencies> = {},
): Promise<RunningSandboxServer> {
  const log = logger.child({ component: 'sandbox-server' });
  const database = await openDatabase(
    config.DATABASE_URL
      ? { url: config.DATABASE_URL, queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_SECONDS * 1000 }
      : { pgliteDir: join(config.DATA_DIR, 'pglite') },
  );
  const runtime =
    dependencies.runtime ??
    createDockerRuntime({ instanceId: config.SANDBOX_SERVER_INSTANCE, networkPool: config.SANDBOX_NETWORK_POOL, copyImage: config.AGENT_SERVER_IMAGE });
  const availableRuntimes = await runtime.runtimes().catch(() => null);
  const defaultRuntime = chooseDefaultRuntime(config.SANDBOX_RUNTIME, availableRuntimes);
  if (defaultRuntime.warning) log.warn(defaultRuntime.warning);
  // The host's firewall is the Docker runtime's business; a runtime passed in (tests) has none.
  const firewallProblem = dependencies.runtime ? null : await installFirewall();
  if (firewallProblem) {
    log.warn(
      `sandboxes can reach the host: the control plane could not install its firewall rules (${firewallProblem}); ` +
        'run it as root with iptables on the host; until then specs with network "none" are refused',
    );
  }
  await ensureDefaultSandboxSpec(
    database.db,
    config.AGENT_SERVER_IMAGE,
    { memoryMb: config.SANDBOX_DEFAULT_MEMORY_MB, pidsLimit: config.SANDBOX_DEFAULT_PIDS, cpus: config.SANDBOX_DEFAULT_CPUS },
    defaultRuntime.runtime,
    config.SANDBOX_WARM_POOL,
  );

  const ensureImage =
    dependencies.ensureImage ??
    (() =>
      ensureAgentServerImage({
        baseImage: config.SANDBOX_BASE_IMAGE,
        tag: config.AGENT_SERVER_IMAGE,
        onProgress: (line) => log.info({ image: config.AGENT_SERVER_IMAGE }, line),
      }));
  const events = new EventFeed();
  await events.listen(database.listen);
  const stopRetention = keepEventsFor({
    db: database.db,
    retentionMs: config.EVENT_RETENTION_DAYS * DAY_MS,
    intervalMs: RETENTION_SWEEP_MS,
    log,
  });
  const webhooks = new WebhookDispatcher({
    db: database.db,
    feed: events,
    log,
    timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
    retry: { firstRetryMs: config.WEBHOOK_FIRST_RETRY_SECONDS * 1000 },
  });
  const metrics = createMetrics();
  const sandboxMetrics = createSandboxMetrics(metrics.registry);
  sandboxMetrics.setStatusCounts(() => countSandboxesByStatus(database.db));
  sandboxMetrics.setVersionCounts(() => countSandboxesByAgentServerVersion(database.db));
  sandboxMetrics.setWarmPoolCounts(() => countWarmPools(database.db));
  const reconciler = new Reconciler({
    metrics: sandboxMetrics,
    checkAlive: dependencies.checkAlive,
    db: database.db,
    runtime,
    instanceId: config.SANDBOX_SERVER_INSTANCE,
    intervalMs: config.RECONCILE_INTERVAL_MS,
    orphanGraceMs: config.ORPHAN_GRACE_SECONDS * 1000,
    startTimeoutMs: config.SANDBOX_START_TIMEOUT_SECONDS * 1000,
    warmPools: { cap: config.MAX_WARM_SANDBOXES },
  });
  // Every replica serves the API and the proxy; only the lease holder reconciles and runs start
  // tasks. The others hand it their kicks and tasks over NOTIFY.
  // PGlite is this process's alone, so a restart after a crash takes the lease back at once rather
  // than waiting out the one the dead process held.
  const replica = database.driver === 'pglite' ? 'the only replica' : `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
  let reconcilerLease: LeaseKeeper | undefined;
  const leading = () => reconcilerLease?.held === true;
  const kick = (sandboxId?: string) => (leading() ? reconciler.kick(sandboxId) : handOff(database.db, KICK_CHANNEL, sandboxId ?? '', log));
  const { listener, injectWebSocket, startTasks } = createSandboxServerApp({
    db: database.db,
    reconciler: {
      kick,
      // Handed off as a kick of everything: the holder's full pass tops the pools up too.
      refillWarmPools: () => (leading() ? reconciler.refillWarmPools() : handOff(database.db, KICK_CHANNEL, '', log)),
      onSandboxWritten: (listener) => reconciler.onSandboxWritten(listener),
      // Only the replica that reconciles watches the engine; the others take it to be there.
      engineAvailable: () => reconciler.engineAvailable(),
    },
    handOffStartTask: (taskId) => handOff(database.db, START_TASK_CHANNEL, taskId, log),
    apiKeys: config.SANDBOX_SERVER_API_KEYS,
    browser: { allowedHosts: config.ALLOWED_HOSTS, corsOrigins: config.CORS_ORIGINS },
    maxRunningSandboxes: config.MAX_RUNNING_SANDBOXES,
    runtimes: { default: defaultRuntime.runtime, available: availableRuntimes, firewallProblem },
    // Held in the database, so that the replica reconciling honours it whichever replica snapshots.
    snapshots: { runtime, hold: (sandboxId, work) => holdSandbox({ db: database.db, kick }, sandboxId, work) },
    maxRequestBodyBytes: config.MAX_REQUEST_BODY_MB * 1024 * 1024,
    metrics,
    countWarmPoolClaim: (specId, hit) => sandboxMetrics.countWarmPoolClaim(specId, hit),
    events,
    appConversations: {
      llm: { model: config.LLM_MODEL ?? null, baseUrl: config.LLM_BASE_URL ?? null, apiKey: config.LLM_API_KEY ?? null },
      sandboxStartTimeoutMs: config.SANDBOX_START_TIMEOUT_SECONDS * 1000,
    },
  });

  reconcilerLease = new LeaseKeeper({
    db: database.db,
    name: RECONCILER_LEASE,
    holder: replica,
    ttlMs: LEASE_TTL_MS,
    log,
    // Start tasks left unfinished, by a previous run or the previous holder, carry on once sandboxes
    // can be converged.
    onAcquired: async () => {
      await reconciler.start();
      await startTasks.start();
    },
    onLost: async () => {
      await startTasks.stop();
      await reconciler.stop();
    },
  });
  registerLeaseMetrics(metrics.registry, { [RECONCILER_LEASE]: reconcilerLease });
  // A notification without payload follows a reconnection of the listener: look at everything.
  const unlistenKicks = await database.listen(KICK_CHANNEL, (sandboxId) => {
    if (leading()) reconciler.kick(sandboxId || undefined);
  });
  const unlistenStartTasks = await database.listen(START_TASK_CHANNEL, (taskId) => {
    if (!leading()) return;
    if (taskId) startTasks.enqueue(taskId);
    else startTasks.start().catch((err: unknown) => log.error({ err }, 'app conversation start tasks failed to resume'));
  });

  let server: Server;
  try {
    server = await listen(listener, config.HOST, config.PORT);
  } catch (error) {
    stopRetention();
    await events.close();
    await unlistenKicks();
    await unlistenStartTasks();
    await database.close();
    throw error;
  }
  injectWebSocket(server);
  webhooks.start();
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
  if (config.SANDBOX_SERVER_API_KEYS.length === 0) {
    log.warn('authentication is off: SANDBOX_SERVER_API_KEYS is not set, so anyone who can reach this address controls the sandboxes');
  }
  log.info(
    {
      url,
      database: database.driver,
      instance: config.SANDBOX_SERVER_INSTANCE,
      replica,
      replicas: database.driver === 'postgres' ? 'any number on this database' : 'this one only: set DATABASE_URL to run several',
    },
    'sandbox-server listening',
  );

  // Requests are answered while the image builds; sandboxes asked for meanwhile are created by the
  // reconciler's first pass, once the image exists and this replica holds the lease. A failed build
  // is logged, and the reconciler runs anyway so that pauses and deletes still take effect.
  let closing = false;
  void ensureImage()
    .then((outcome) => log.info({ image: config.AGENT_SERVER_IMAGE, outcome }, 'agent-server image ready'))
    .catch((err: unknown) => log.error({ err, image: config.AGENT_SERVER_IMAGE }, 'agent-server image is not available; sandboxes cannot start'))
    .then(() => (closing ? undefined : reconcilerLease.start()))
    .catch((err: unknown) => log.error({ err }, 'reconciler lease could not be sought'));

  return {
    url,
    async close() {
      closing = true;
      stopRetention();
      // Event streams never end by themselves: ending them lets the requests in flight drain.
      await events.close();
      await stopListening(server);
      // Stops the reconciler and the start tasks, and gives the lease up for another replica. A
      // build still running is not waited for; the lease is then never sought.
      await reconcilerLease.stop();
      await unlistenKicks();
      await unlistenStartTasks();
      await webhooks.stop();
      await database.close();
      log.info('sandbox-server stopped');
    },
  };
}

function listen(listener: RequestListener, hostname: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer(listener);
    server.once('error', reject);
    server.listen(port, hostname, () => resolve(server));
  });
}

/** server.close() waits for requests in flight (and closes idle keep-alive connections). */
async function stopListening(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const timer = setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS);
  await closed;
  clearTimeout(timer);
}
