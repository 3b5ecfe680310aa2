import { randomBytes } from 'node:crypto';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { SANDBOX_STATUSES } from '../contracts/sandbox.js';
import { createMetrics, createSandboxMetrics } from '../http/metrics/index.js';
import { logger } from '../logger.js';
import { createSandboxServerApp } from './app.js';
import type { SandboxServerConfig } from './config.js';
import { type Database, openDatabase } from './db/client.js';
import { agentServerImages } from './engines/agent-server-images.js';
import { dockerFor } from './runtime/docker-for.js';
import { dockerIdentity } from './engines/docker-identity.js';
import type { EngineIdentity } from './services/engines/engine-identity.js';
import { Drainer } from './engines/drainer.js';
import { registerEngineMetrics } from './engines/engine-metrics.js';
import { defaultDockerUrl } from './net/engine-address.js';
import { registerConfiguredEngines } from './engines/register-engines.js';
import { EngineRegistry, reconcilerLease } from './engines/registry.js';
import { failedProbes, RuntimeProbes } from './engines/runtime-probes.js';
import { EventFeed } from './lifecycle-events/event-feed.js';
import { keepEventsFor } from './lifecycle-events/retention.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { createWebhookTargets } from './webhooks/targets.js';
import { holdSandbox, Reconciler, type ReconcilerOptions } from './reconciler/index.js';
import { readInstallationId } from './installation/installation-id.js';
import { type SharedSettings, settleSettings } from './installation/shared-settings.js';
import { redactedUrl } from './db/connection-errors.js';
import { jsonStartupReport, type StartupReport } from './startup-report.js';
import { type DataDirLock, lockDataDir } from './installation/data-dir-lock.js';
import { WarmPoolKeeper } from './warm-pool/keeper.js';
import { recordEngineHealth } from './reconciler/record-engine-health.js';
import { handOff, START_TASK_CHANNEL, WARM_POOLS_CHANNEL } from './replicas/hand-off.js';
import { LeaseKeeper } from './replicas/lease-keeper.js';
import { registerLeaseMetrics } from './replicas/lease-metrics.js';
import { chooseDefaultRuntime } from './runtime/default-runtime.js';
import { installFirewall } from './runtime/firewall.js';
import { createDockerRuntime, type SandboxRuntime } from './runtime/index.js';
import { ensureDefaultSandboxSpec } from './services/sandbox-specs/default-spec.js';
import { readSandboxGaugesFrom } from './metrics/sandbox-gauges.js';
import { serveWebSocketUpgradesOnly } from '../http/upgrade.js';

/** What the server talks to besides its database; tests pass a fake runtime and skip the image. */
export interface SandboxServerDependencies {
  /** The runtime of every engine (tests run one fake engine); default: Docker at each engine's URL. */
  runtime: SandboxRuntime;
  /** Makes the agent-server image exist on an engine (building it on first use, or copying it). */
  ensureImage(): Promise<unknown>;
  /** How the reconciler asks a sandbox's agent-server whether it is up; default GET /alive. */
  checkAlive: ReconcilerOptions['checkAlive'];
  /** Who the dockerd at a URL says it is, so one is not registered twice; default `docker info`. */
  engineIdentity: EngineIdentity;
  /** How start-up is shown; default JSON log lines (main.ts shows a terminal progress and summary instead). */
  report: StartupReport;
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
/**
 * The replica-wide jobs run by one replica at a time: app-conversation start tasks and the warm
 * pools' top-ups (one planner for all engines). Each engine's reconciler has a lease of its own.
 */
const CONTROL_PLANE_LEASE = 'control-plane';

/** In-flight requests get this long to finish on shutdown before their connections are cut. */
const DRAIN_TIMEOUT_MS = 10_000;

/**
 * Wires config -> database -> runtime -> reconciler -> HTTP app, and listens. A PGlite data
 * directory is locked first: a second process on it is refused, naming the holder.
 */
export async function startSandboxServer(
  config: SandboxServerConfig,
  dependencies: Partial<SandboxServerDependencies> = {},
): Promise<RunningSandboxServer> {
  const lock = config.DATABASE_URL ? undefined : await lockDataDir(config.DATA_DIR, { port: config.PORT === 0 ? null : config.PORT, command: 'sandbox-server' });
  try {
    return await serve(config, dependencies, lock);
  } catch (error) {
    await lock?.release();
    throw error;
  }
}

async function serve(config: SandboxServerConfig, dependencies: Partial<SandboxServerDependencies>, lock: DataDirLock | undefined): Promise<RunningSandboxServer> {
  const log = logger.child({ component: 'sandbox-server' });
  const report = dependencies.report ?? jsonStartupReport(log);
  const databaseName = config.DATABASE_URL ? `PostgreSQL at ${redactedUrl(config.DATABASE_URL)}` : `PGlite in ${join(config.DATA_DIR, 'pglite')}`;
  report.step(`opening the database (${databaseName}) and applying its migrations`);
  const database = await openDatabase(
    config.DATABASE_URL
      ? { url: config.DATABASE_URL, queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_SECONDS * 1000 }
      : { pgliteDir: join(config.DATA_DIR, 'pglite') },
  );
  const engineIdentity = dependencies.engineIdentity ?? dockerIdentity(config.DOCKER_TLS_CERT_DIR, log);
  let installationId: string;
  let shared: SharedSettings;
  try {
    installationId = await readInstallationId(database.db);
    shared = await settleSettings(database.db, config, log);
    report.step('registering the Docker engines');
    await registerConfiguredEngines(database.db, config.DOCKER_ENGINES, defaultDockerUrl(process.env), engineIdentity);
  } catch (error) {
    await database.close();
    throw error;
  }
  // PGlite is this process's alone, so a restart after a crash takes the leases back at once rather
  // than waiting out the ones the dead process held.
  const replica = database.driver === 'pglite' ? 'the only replica' : `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
  const metrics = createMetrics();
  const sandboxMetrics = createSandboxMetrics(metrics.registry);
  readSandboxGaugesFrom(database.db, sandboxMetrics);
  registerEngineMetrics(metrics.registry, database.db);
  const images = agentServerImages({
    tag: config.AGENT_SERVER_IMAGE,
    baseImage: config.SANDBOX_BASE_IMAGE,
    dockerOf: (row) => dockerFor(row, config.DOCKER_TLS_CERT_DIR),
    log,
  });
  const runtimeProbes = new RuntimeProbes({ images: [config.AGENT_SERVER_IMAGE, config.SANDBOX_BASE_IMAGE], log });
  const engines = new EngineRegistry({
    db: database.db,
    listen: database.listen,
    replica,
    leaseTtlMs: LEASE_TTL_MS,
    log,
    runtimeFor: (row) =>
      dependencies.runtime ??
      createDockerRuntime({
        instanceId: config.SANDBOX_SERVER_INSTANCE,
        installationId,
        networkPool: config.SANDBOX_NETWORK_POOL,
        spareNetworks: config.SANDBOX_SPARE_NETWORKS,
        copyImage: config.AGENT_SERVER_IMAGE,
        docker: dockerFor(row, config.DOCKER_TLS_CERT_DIR),
        publishHost: row.advertiseHost,
        logRotation: { maxMb: config.SANDBOX_LOG_MAX_MB, maxFiles: config.SANDBOX_LOG_MAX_FILES },
      }),
    reconcilerFor: (row, runtime) =>
      new Reconciler({
        metrics: sandboxMetrics,
        checkAlive: dependencies.checkAlive,
        db: database.db,
        engine: row.name,
        advertiseHost: row.advertiseHost,
        runtime,
        instanceId: config.SANDBOX_SERVER_INSTANCE,
        installationId,
        intervalMs: config.RECONCILE_INTERVAL_MS,
        orphanGraceMs: config.ORPHAN_GRACE_SECONDS * 1000,
        startTimeoutMs: config.SANDBOX_START_TIMEOUT_SECONDS * 1000,
        diskCheckIntervalMs: config.SANDBOX_DISK_CHECK_SECONDS * 1000,
        onHealth: (healthy, detail) => recordEngineHealth(database.db, row.name, healthy, detail),
      }),
    prepare: async (row) => {
      await (dependencies.ensureImage ? dependencies.ensureImage() : images.ensureOn(row));
    },
    onAdded: (row, runtime) => void runtimeProbes.probe(row.name, runtime),
    onRemoved: (engine) => runtimeProbes.forget(engine),
  });
  await engines.sync();
  report.step('asking the engines for their runtimes and probing them');
  const engineRuntimes = await Promise.all(
    engines.handles().map(async (handle) => ({ name: handle.row.name, dockerUrl: handle.row.dockerUrl, runtimes: await handle.runtime.runtimes().catch(() => null) })),
  );
  const [firstEngine] = engines.handles();
  const listedRuntimes = engineRuntimes[0]?.runtimes ?? null;
  const failedRuntimes = failedProbes(firstEngine ? await runtimeProbes.probe(firstEngine.row.name, firstEngine.runtime) : []);
  const defaultRuntime = chooseDefaultRuntime(shared.runtime, listedRuntimes, failedRuntimes);
  if (defaultRuntime.refusal) {
    await engines.stop();
    await database.close();
    throw new Error(defaultRuntime.refusal);
  }
  if (defaultRuntime.warning) log.warn(defaultRuntime.warning);
  // Specs may name only the runtimes that passed their self-test.
  const availableRuntimes = listedRuntimes?.filter((name) => !failedRuntimes.has(name)) ?? null;
  // The host's firewall is the Docker runtime's business; a runtime passed in (tests) has none.
  const firewallProblem = dependencies.runtime ? null : await installFirewall({ allow: config.SANDBOX_INTERNET_ALLOW });
  if (firewallProblem) {
    log.warn(
      `sandboxes can reach the host: the control plane could not install its firewall rules (${firewallProblem}); ` +
        'run it as root with iptables on the host; until then specs with network "none" are refused',
    );
  }
  const { memoryMb, pidsLimit, cpus, diskMb, warmPoolSize } = shared;
  await ensureDefaultSandboxSpec(database.db, config.AGENT_SERVER_IMAGE, { memoryMb, pidsLimit, cpus, diskMb }, defaultRuntime.runtime, warmPoolSize);

  const events = new EventFeed();
  await events.listen(database.listen);
  const stopRetention = keepEventsFor({
    db: database.db,
    retentionMs: config.EVENT_RETENTION_DAYS * DAY_MS,
    intervalMs: RETENTION_SWEEP_MS,
    log,
  });
  const webhookTargets = createWebhookTargets({ allowedHosts: config.WEBHOOK_ALLOWED_HOSTS });
  const webhooks = new WebhookDispatcher({
    targets: webhookTargets,
    db: database.db,
    feed: events,
    log,
    timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
    retry: { firstRetryMs: config.WEBHOOK_FIRST_RETRY_SECONDS * 1000 },
  });
  const warmPools = new WarmPoolKeeper({
    db: database.db,
    imageId: (image) => engines.imageId(image),
    cap: config.MAX_WARM_SANDBOXES,
    intervalMs: config.RECONCILE_INTERVAL_MS,
    kick: (sandboxId) => engines.kick(sandboxId),
    log,
  });
  // A draining engine's sandboxes are moved by the replica holding its lease, as its reconciler is.
  const drainer = new Drainer({
    db: database.db,
    log,
    instanceId: config.SANDBOX_SERVER_INSTANCE,
    installationId,
    helperImage: config.AGENT_SERVER_IMAGE,
    intervalMs: config.RECONCILE_INTERVAL_MS,
    idleMs: config.DRAIN_IDLE_SECONDS * 1000,
    ownEngines: () => engines.handles().filter((handle) => handle.lease.held).map((handle) => handle.row.name),
    runtimeOf: (engine) => engines.runtimeOf(engine),
    dockerOf: (engine) => dockerFor(engines.rowOf(engine), config.DOCKER_TLS_CERT_DIR),
    hold: (sandboxId, work) => holdSandbox({ db: database.db, kick: (id) => engines.kick(id) }, sandboxId, work),
    kick: (sandboxId) => engines.kick(sandboxId),
  });
  // Every replica serves the API and the proxy. Each engine's reconciler runs in the replica holding
  // its lease, and the replica-wide jobs in the one holding CONTROL_PLANE_LEASE; the others hand
  // them kicks, top-ups and start tasks over NOTIFY.
  let controlPlaneLease: LeaseKeeper | undefined;
  const leading = () => controlPlaneLease?.held === true;
  const { listener, injectWebSocket, startTasks } = createSandboxServerApp({
    db: database.db,
    reconciler: {
      kick: (sandboxId, engine) => engines.kick(sandboxId, engine),
      refillWarmPools: () => (leading() ? warmPools.refill() : handOff(database.db, WARM_POOLS_CHANNEL, '', log)),
      onSandboxWritten: (listener) => engines.onSandboxWritten(listener),
      engineAvailable: (sandboxId) => engines.engineAvailable(sandboxId),
    },
    handOffStartTask: (taskId) => handOff(database.db, START_TASK_CHANNEL, taskId, log),
    apiKeys: config.SANDBOX_SERVER_API_KEYS,
    adminKeys: config.SANDBOX_SERVER_ADMIN_KEYS,
    webhookTargets,
    maxEventStreamsPerKey: config.MAX_EVENT_STREAMS_PER_KEY,
    browser: { allowedHosts: config.ALLOWED_HOSTS, corsOrigins: config.CORS_ORIGINS },
    maxRunningSandboxes: config.MAX_RUNNING_SANDBOXES,
    runtimes: { available: availableRuntimes, failed: failedRuntimes, firewallProblem },
    runtimeProbes: (engine) => runtimeProbes.resultsOf(engine),
    // Held in the database, so that the reconciler of the sandbox's engine honours it whichever replica snapshots.
    snapshots: {
      runtimeOf: (engine) => engines.runtimeOf(engine),
      hold: (sandboxId, work) => holdSandbox({ db: database.db, kick: (id) => engines.kick(id) }, sandboxId, work),
      maxMb: config.SNAPSHOT_MAX_MB || undefined,
    },
    maxRequestBodyBytes: config.MAX_REQUEST_BODY_MB * 1024 * 1024,
    metrics,
    countWarmPoolClaim: (specId, hit) => sandboxMetrics.countWarmPoolClaim(specId, hit),
    engineIdentity,
    events,
    appConversations: {
      llm: { model: config.LLM_MODEL ?? null, baseUrl: config.LLM_BASE_URL ?? null, apiKey: config.LLM_API_KEY ?? null },
      sandboxStartTimeoutMs: config.SANDBOX_START_TIMEOUT_SECONDS * 1000,
    },
  });

  controlPlaneLease = new LeaseKeeper({
    db: database.db,
    name: CONTROL_PLANE_LEASE,
    holder: replica,
    ttlMs: LEASE_TTL_MS,
    log,
    // Start tasks left unfinished, by a previous run or the previous holder, carry on.
    onAcquired: async () => {
      warmPools.start();
      await startTasks.start();
    },
    onLost: async () => {
      await startTasks.stop();
      await warmPools.stop();
    },
  });
  const controlPlane = controlPlaneLease;
  registerLeaseMetrics(metrics.registry, () => ({
    [CONTROL_PLANE_LEASE]: controlPlane,
    ...Object.fromEntries(engines.handles().map((handle) => [reconcilerLease(handle.row.name), handle.lease])),
  }));
  // A notification without payload follows a reconnection of the listener: look at every task.
  const unlistenStartTasks = await database.listen(START_TASK_CHANNEL, (taskId) => {
    if (!leading()) return;
    if (taskId) startTasks.enqueue(taskId);
    else startTasks.start().catch((err: unknown) => log.error({ err }, 'app conversation start tasks failed to resume'));
  });
  const unlistenWarmPools = await database.listen(WARM_POOLS_CHANNEL, () => {
    if (leading()) warmPools.refill();
  });

  let server: Server;
  try {
    server = await listen(listener, config.HOST, config.PORT);
  } catch (error) {
    stopRetention();
    await events.close();
    await unlistenStartTasks();
    await unlistenWarmPools();
    await engines.stop();
    await database.close();
    throw error;
  }
  serveWebSocketUpgradesOnly(server, injectWebSocket, log);
  webhooks.start();
  const { port } = server.address() as AddressInfo;
  await lock?.setPort(port);
  const url = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
  if (config.SANDBOX_SERVER_API_KEYS.length + config.SANDBOX_SERVER_ADMIN_KEYS.length === 0) {
    log.warn('authentication is off: SANDBOX_SERVER_API_KEYS is not set, so anyone who can reach this address controls the sandboxes');
  }
  report.ready({
    url,
    database: databaseName,
    installation: installationId,
    instance: config.SANDBOX_SERVER_INSTANCE,
    replica,
    replicas: database.driver === 'postgres' ? 'any number on this database' : 'this one only: set DATABASE_URL to run several',
    engines: engineRuntimes,
    defaultRuntime: defaultRuntime.runtime,
    auth: config.SANDBOX_SERVER_API_KEYS.length + config.SANDBOX_SERVER_ADMIN_KEYS.length > 0,
  });

  // Requests are answered while images build; sandboxes asked for meanwhile are created by their
  // engine's reconciler, which starts once the image is on that engine (see agentServerImages). A
  // failed build is logged, and the reconciler runs anyway so that pauses and deletes still take effect.
  await engines.start();
  drainer.start();
  void controlPlaneLease.start().catch((err: unknown) => log.error({ err }, 'control-plane lease could not be sought'));

  return {
    url,
    async close() {
      stopRetention();
      // Event streams never end by themselves: ending them lets the requests in flight drain.
      await events.close();
      await stopListening(server);
      // Stops the reconcilers and the replica-wide jobs, and gives the leases up for other replicas.
      await controlPlaneLease.stop();
      await drainer.stop();
      await engines.stop();
      await unlistenStartTasks();
      await unlistenWarmPools();
      await webhooks.stop();
      await database.close();
      await lock?.release();
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
