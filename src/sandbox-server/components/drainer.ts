import type { Logger } from '../../logger.js';
import type { SandboxServerConfig } from '../config.js';
import type { DatabaseHandle } from '../db/client.js';
import { dockerFor } from '../runtime/docker-for.js';
import { Drainer } from '../engines/drainer.js';
import type { EngineRegistry } from '../engines/registry.js';
import { holdSandbox } from '../reconciler/index.js';
import type { Component } from './component.js';

/** A draining engine's sandboxes are moved by the replica holding its lease, as its reconciler is. */
export function drainerComponent(config: SandboxServerConfig, database: DatabaseHandle, engines: EngineRegistry, installationId: string, log: Logger): Component {
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
  return { name: 'drainer', start: async () => drainer.start(), stop: () => drainer.stop() };
}
