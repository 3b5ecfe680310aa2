import type { Metrics, SandboxMetrics } from '../../http/metrics/index.js';
import type { Logger } from '../../logger.js';
import { createSandboxServerApp, type SandboxServerApp } from '../app.js';
import type { SandboxServerConfig } from '../config.js';
import type { DatabaseHandle } from '../db/client.js';
import type { EngineRegistry } from '../engines/registry.js';
import type { RuntimeProbes } from '../engines/runtime-probes.js';
import type { EventFeed } from '../lifecycle-events/event-feed.js';
import { holdSandbox } from '../reconciler/index.js';
import { handOff, START_TASK_CHANNEL, WARM_POOLS_CHANNEL } from '../replicas/hand-off.js';
import type { EngineIdentity } from '../services/engines/engine-identity.js';
import type { SpecImages } from '../services/context.js';
import type { WarmPoolKeeper } from '../warm-pool/keeper.js';
import type { WebhookTargets } from '../webhooks/targets.js';
import type { SettledRuntimes } from './runtimes.js';

export interface ApiOptions {
  config: SandboxServerConfig;
  database: DatabaseHandle;
  engines: EngineRegistry;
  runtimeProbes: RuntimeProbes;
  runtimes: SettledRuntimes;
  warmPools: WarmPoolKeeper;
  /** Whether this replica holds the control-plane lease, and so tops the warm pools up itself. */
  leading: () => boolean;
  webhookTargets: WebhookTargets;
  events: EventFeed;
  metrics: Metrics;
  sandboxMetrics: SandboxMetrics;
  engineIdentity: EngineIdentity;
  specImages: SpecImages;
  /** The LLM relay as the sandboxes reach it, `http://host:port`. */
  llmRelayOrigin: string;
  /** Enforces allowlist sandboxes' egress on this machine; undefined where nothing can. */
  egress?: { kick(): Promise<void> };
  log: Logger;
}

/**
 * The API and the proxy, which every replica serves. Each engine's reconciler runs in the replica
 * holding its lease, and the replica-wide jobs in the one holding the control-plane lease; the
 * others hand them kicks, top-ups and start tasks over NOTIFY.
 */
export function createApi(options: ApiOptions): SandboxServerApp {
  const { config, database, engines, runtimes, warmPools, leading, log } = options;
  return createSandboxServerApp({
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
    webhookTargets: options.webhookTargets,
    maxEventStreamsPerKey: config.MAX_EVENT_STREAMS_PER_KEY,
    browser: { allowedHosts: config.ALLOWED_HOSTS, corsOrigins: config.CORS_ORIGINS },
    previewDomain: config.PREVIEW_DOMAIN ?? null,
    publicUrl: config.PUBLIC_URL,
    maxRunningSandboxes: config.MAX_RUNNING_SANDBOXES,
    runtimes: { available: runtimes.available, failed: runtimes.failed, firewallProblem: runtimes.firewallProblem },
    runtimeProbes: (engine) => options.runtimeProbes.resultsOf(engine),
    // Held in the database, so that the reconciler of the sandbox's engine honours it whichever replica snapshots.
    snapshots: {
      runtimeOf: (engine) => engines.runtimeOf(engine),
      hold: (sandboxId, work) => holdSandbox({ db: database.db, kick: (id) => engines.kick(id) }, sandboxId, work),
      maxMb: config.SNAPSHOT_MAX_MB || undefined,
    },
    maxRequestBodyBytes: config.MAX_REQUEST_BODY_MB * 1024 * 1024,
    metrics: options.metrics,
    countWarmPoolClaim: (specId, hit) => options.sandboxMetrics.countWarmPoolClaim(specId, hit),
    engineIdentity: options.engineIdentity,
    whyImageUnfit: (image) => engines.whyImageUnfit(image),
    specImages: options.specImages,
    // A build's context may be larger than other requests.
    maxSpecCreateBodyBytes: Math.ceil((config.SPEC_BUILD_CONTEXT_MAX_MB * 1024 * 1024 * 4) / 3) + 2 * 1024 * 1024,
    applyEgress: options.egress ? () => options.egress?.kick() ?? Promise.resolve() : undefined,
    events: options.events,
    appConversations: {
      llm: { model: config.LLM_MODEL ?? null, baseUrl: config.LLM_BASE_URL ?? null },
      llmRelay: { origin: options.llmRelayOrigin },
      sandboxStartTimeoutMs: config.SANDBOX_START_TIMEOUT_SECONDS * 1000,
    },
  });
}
