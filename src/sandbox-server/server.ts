import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { createMetrics, createSandboxMetrics } from '../http/metrics/index.js';
import { logger } from '../logger.js';
import type { SandboxServerConfig } from './config.js';
import { dockerIdentity } from './engines/docker-identity.js';
import { registerEngineMetrics } from './engines/engine-metrics.js';
import { reconcilerLease } from './engines/registry.js';
import { readSandboxGaugesFrom } from './metrics/sandbox-gauges.js';
import type { ReconcilerOptions } from './reconciler/index.js';
import type { LeaseKeeper } from './replicas/lease-keeper.js';
import { registerLeaseMetrics } from './replicas/lease-metrics.js';
import type { SandboxRuntime } from './runtime/index.js';
import type { EngineIdentity } from './services/engines/engine-identity.js';
import { jsonStartupReport, type StartupReport } from './startup-report.js';
import { WarmPoolKeeper } from './warm-pool/keeper.js';
import { createApi } from './components/api.js';
import { StartedComponents } from './components/component.js';
import { CONTROL_PLANE_LEASE, controlPlaneLease, controlPlaneLeaseComponent } from './components/control-plane-lease.js';
import { dataDirLockComponent } from './components/data-dir-lock.js';
import { databaseComponent } from './components/database.js';
import { drainerComponent } from './components/drainer.js';
import { egressComponent } from './components/egress.js';
import { enginesComponent, reconcilersComponent } from './components/engines.js';
import { eventFeedComponent, eventRetentionComponent } from './components/event-feed.js';
import { handOffsComponent } from './components/hand-offs.js';
import { httpServerComponent } from './components/http-server.js';
import { llmRelayComponent } from './components/llm-relay.js';
import { settleRuntimes } from './components/runtimes.js';
import { webhooksComponent } from './components/webhooks.js';
import { specImageBuildsComponent } from './components/spec-image-builds.js';

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

/**
 * Wires config -> database -> engines -> runtimes -> the API -> background jobs -> HTTP, one
 * component at a time (components/): started in this order, stopped in the reverse, on close and when
 * one fails to start. Containers keep running when it stops; the next start adopts them.
 */
export async function startSandboxServer(
  config: SandboxServerConfig,
  dependencies: Partial<SandboxServerDependencies> = {},
): Promise<RunningSandboxServer> {
  const log = logger.child({ component: 'sandbox-server' });
  const report = dependencies.report ?? jsonStartupReport(log);
  const engineIdentity = dependencies.engineIdentity ?? dockerIdentity(config.DOCKER_TLS_CERT_DIR, log);
  const components = new StartedComponents(log);
  return components.startOrRollBack(async () => {
    const lock = await components.start(dataDirLockComponent(config));
    const { database, name: databaseName, installationId, shared, installationCa } = await components.start(databaseComponent(config, engineIdentity, report, log));
    // PGlite is this process's alone, so a restart after a crash takes the leases back at once rather
    // than waiting out the ones the dead process held.
    const replica = database.driver === 'pglite' ? 'the only replica' : `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
    const metrics = createMetrics();
    const sandboxMetrics = createSandboxMetrics(metrics.registry);
    readSandboxGaugesFrom(database.db, sandboxMetrics);
    registerEngineMetrics(metrics.registry, database.db);
    const { engines, runtimeProbes } = await components.start(
      enginesComponent({ config, dependencies, database, installationId, trustedCa: installationCa.certPem, replica, metrics: sandboxMetrics, log }),
    );
    report.step('asking the engines for their runtimes and probing them');
    const runtimes = await settleRuntimes({ config, db: database.db, engines, runtimeProbes, shared, runtimePassedIn: dependencies.runtime !== undefined, log });

    const events = await components.start(eventFeedComponent(database));
    const egress = await components.start(
      egressComponent({ config, database, engines, registry: metrics.registry, firewallProblem: runtimes.firewallProblem, runtimePassedIn: dependencies.runtime !== undefined, installationCa, log }),
    );
    await components.start(eventRetentionComponent(config, database, log));
    const webhookTargets = await components.start(webhooksComponent(config, database, events, log));
    const specImages = await components.start(specImageBuildsComponent({ config, db: database.db, installationId, log }));
    const warmPools = new WarmPoolKeeper({
      db: database.db,
      imageId: (image) => engines.imageId(image),
      cap: config.MAX_WARM_SANDBOXES,
      intervalMs: config.RECONCILE_INTERVAL_MS,
      kick: (sandboxId) => engines.kick(sandboxId),
      log,
    });
    // The lease needs the API's start tasks, and the API asks whether this replica holds it.
    let lease: LeaseKeeper | undefined;
    const leading = () => lease?.held === true;
    const containers = dependencies.runtime === undefined;
    const { origin: llmRelayOrigin } = await components.start(llmRelayComponent({ config, database, metrics, containers, log }));
    const api = { config, database, engines, runtimeProbes, runtimes, warmPools, leading, webhookTargets, events, metrics, sandboxMetrics, engineIdentity, specImages, llmRelayOrigin, egress, log };
    const { listener, injectWebSocket, startTasks } = createApi(api);
    const controlPlane = controlPlaneLease(database, replica, [warmPools, startTasks], log);
    lease = controlPlane;
    registerLeaseMetrics(metrics.registry, () => ({
      [CONTROL_PLANE_LEASE]: controlPlane,
      ...Object.fromEntries(engines.handles().map((handle) => [reconcilerLease(handle.row.name), handle.lease])),
    }));
    await components.start(handOffsComponent({ database, leading, startTasks, warmPools, log }));
    await components.start(reconcilersComponent(engines));
    await components.start(drainerComponent(config, database, engines, installationId, log));
    await components.start(controlPlaneLeaseComponent(controlPlane, log));
    const url = await components.start(httpServerComponent({ config, listener, injectWebSocket, events, lock, log }));

    report.ready({
      url,
      database: databaseName,
      installation: installationId,
      instance: config.SANDBOX_SERVER_INSTANCE,
      replica,
      replicas: database.driver === 'postgres' ? 'any number on this database' : 'this one only: set DATABASE_URL to run several',
      engines: runtimes.engines,
      defaultRuntime: runtimes.defaultRuntime,
      auth: config.SANDBOX_SERVER_API_KEYS.length + config.SANDBOX_SERVER_ADMIN_KEYS.length > 0,
    });
    return {
      url,
      async close() {
        await components.stop();
        log.info('sandbox-server stopped');
      },
    };
  });
}
