import type { SandboxMetrics } from '../../http/metrics/index.js';
import type { Logger } from '../../logger.js';
import type { SandboxServerConfig } from '../config.js';
import type { DatabaseHandle } from '../db/client.js';
import { agentServerImages } from '../engines/agent-server-images.js';
import { dockerFor } from '../runtime/docker-for.js';
import { EngineRegistry } from '../engines/registry.js';
import { bringBuiltImages } from '../engines/spec-image-builds.js';
import { RuntimeProbes } from '../engines/runtime-probes.js';
import { Reconciler, type ReconcilerOptions } from '../reconciler/index.js';
import { recordEngineHealth } from '../reconciler/record-engine-health.js';
import { createDockerRuntime, type SandboxRuntime } from '../runtime/index.js';
import type { Component } from './component.js';
import { LEASE_TTL_MS } from './control-plane-lease.js';

/** What tests replace on every engine (SandboxServerDependencies). */
export interface EngineDependencies {
  runtime?: SandboxRuntime;
  ensureImage?(): Promise<unknown>;
  checkAlive?: ReconcilerOptions['checkAlive'];
}

export interface EnginesOptions {
  config: SandboxServerConfig;
  dependencies: EngineDependencies;
  database: DatabaseHandle;
  installationId: string;
  /** The installation CA's certificate, installed in every sandbox. */
  trustedCa: string;
  /** Who this replica is, in the leases it holds. */
  replica: string;
  metrics: SandboxMetrics;
  log: Logger;
}

export interface Engines {
  engines: EngineRegistry;
  runtimeProbes: RuntimeProbes;
}

/**
 * Every engine of the engines table with its runtime and its (not yet started) reconciler; each
 * engine's runtimes are self-tested when it is added. The reconcilers start with reconcilersComponent.
 */
export function enginesComponent(options: EnginesOptions): Component<Engines> {
  const { config, log } = options;
  const runtimeProbes = new RuntimeProbes({ images: [config.AGENT_SERVER_IMAGE, config.SANDBOX_BASE_IMAGE], log });
  const engines = registryOf(options, runtimeProbes);
  return {
    name: 'engines',
    async start() {
      await engines.sync();
      return { engines, runtimeProbes };
    },
    stop: () => engines.stop(),
  };
}

/**
 * Requests are answered while images build; sandboxes asked for meanwhile are created by their
 * engine's reconciler, which starts once the image is on that engine (see agentServerImages). A
 * failed build is logged, and the reconciler runs anyway so that pauses and deletes still take effect.
 */
export function reconcilersComponent(engines: EngineRegistry): Component {
  return { name: 'reconcilers', start: () => engines.start(), stop: () => engines.stop() };
}

function registryOf({ config, dependencies, database, installationId, trustedCa, replica, metrics, log }: EnginesOptions, runtimeProbes: RuntimeProbes): EngineRegistry {
  const images = agentServerImages({
    tag: config.AGENT_SERVER_IMAGE,
    baseImage: config.SANDBOX_BASE_IMAGE,
    dockerOf: (row) => dockerFor(row, config.DOCKER_TLS_CERT_DIR),
    log,
  });
  return new EngineRegistry({
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
        agentServerImage: config.AGENT_SERVER_IMAGE,
        registryAuth: config.REGISTRY_AUTH,
        docker: dockerFor(row, config.DOCKER_TLS_CERT_DIR),
        publishHost: row.advertiseHost,
        logRotation: { maxMb: config.SANDBOX_LOG_MAX_MB, maxFiles: config.SANDBOX_LOG_MAX_FILES },
        trustedCa,
      }),
    reconcilerFor: (row, runtime) =>
      new Reconciler({
        metrics,
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
      // Specs built before this engine came: their images, which it could not build itself.
      if (!dependencies.runtime) await bringBuiltImages(database.db, config.DOCKER_TLS_CERT_DIR, row, log);
    },
    onAdded: (row, runtime) => void runtimeProbes.probe(row.name, runtime),
    onRemoved: (engine) => runtimeProbes.forget(engine),
  });
}
