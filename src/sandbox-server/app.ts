import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { createNodeWebSocket, type NodeWebSocket } from '@hono/node-ws';
import type { Context } from 'hono';
import { createApiApp } from '../http/app.js';
import { browserGuard, browserSteps, type BrowserGuardOptions } from '../http/browser-guard/index.js';
import { registerApiDocs } from '../http/docs/index.js';
import { createMetrics, type Metrics, metricsMiddleware, registerMetricsRoute } from '../http/metrics/index.js';
import { requestLogger } from '../http/request-log/index.js';
import { bodyLimit, jsonDepthLimit, rejectNulBytes } from '../http/request-guards/index.js';
import { createAgentClient } from './agent-client.js';
import type { AppConversationContext, AppConversationSettings } from './services/app-conversations/context.js';
import { StartTaskRunner } from './services/app-conversations/start-task-runner.js';
import { apiKeyAuth, apiKeyChecker, apiKeyStep, requireAdmin } from './auth.js';
import type { Database } from './db/client.js';
import { createActivityRecorder } from './services/sandboxes/record-activity.js';
import { createProxyFastPath } from './proxy/fast-path.js';
import { TargetCache } from './proxy/target-cache.js';
import { registerAppConversationRoutes } from './routes/app-conversations/index.js';
import type { EventFeed } from './lifecycle-events/event-feed.js';
import { EventTail } from './lifecycle-events/event-tail.js';
import { StreamLimit } from './lifecycle-events/stream-limit.js';
import { logger, type Logger } from '../logger.js';
import { registerEventRoutes } from './routes/events/index.js';
import { registerWebhookRoutes } from './routes/webhooks/index.js';
import { createWebhookTargets, type WebhookTargets } from './webhooks/targets.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerSandboxAgentProxy } from './routes/sandbox-agent-proxy.js';
import { isPreviewRequest, sandboxPortRoutes } from './routes/sandbox-ports/index.js';
import { previewAddressOf } from './preview/preview-host.js';
import { registerSandboxSpecRoutes } from './routes/sandbox-specs/index.js';
import { registerSandboxRoutes } from './routes/sandboxes/index.js';
import type { EngineRuntimes, ReconcilerKick, ServiceContext, SnapshotEngine } from './services/context.js';
import { NO_SNAPSHOT_ENGINE } from './services/snapshots/no-engine.js';
import { ObservedWrites } from './lifecycle-events/observed-writes.js';
import type { EngineIdentity } from './services/engines/engine-identity.js';
import { registerSnapshotRoutes } from './routes/snapshots/index.js';
import { registerEngineRoutes } from './routes/engines/index.js';
import { registerSettingsRoutes } from './routes/settings/index.js';

export interface SandboxServerAppOptions {
  db: Database;
  /** The real Reconciler, or a recorder in tests. */
  reconciler: ReconcilerKick;
  /** Ordinary keys accepted on /api; with no admin keys either, authentication is off. */
  apiKeys: readonly string[];
  /** Keys that may also administer the fleet (see auth.ts). */
  adminKeys?: readonly string[];
  /** Lifecycle event streams one key may have open at once; default 100. */
  maxEventStreamsPerKey?: number;
  /** Where webhooks may send; default: public addresses only, by the system resolver. */
  webhookTargets?: WebhookTargets;
  /** Host names served besides loopback ones, and origins allowed to call from a browser. */
  browser?: BrowserGuardOptions;
  maxRunningSandboxes: number;
  /** Default: nothing checked, what tests without an engine need. */
  runtimes?: EngineRuntimes;
  /** LLM defaults and timeouts of app conversations. */
  appConversations?: AppConversationSettings;
  /** The registry /metrics serves; the server shares it with the reconciler. */
  metrics?: Metrics;
  /** Wakes the lifecycle event streams when events commit. */
  events: EventFeed;
  /**
   * Where start tasks go while this replica does not run them (it does not hold the reconciler's
   * lease, or has not yet started); dropped when absent, to be resumed by `startTasks.start()`.
   */
  handOffStartTask?: (taskId: string) => void;
  /** The engine and reconciler behind snapshots; absent, snapshot verbs answer 503. */
  snapshots?: SnapshotEngine;
  /** Largest request body accepted on /api, proxied requests excepted; 4 MB when absent. */
  maxRequestBodyBytes?: number;
  /** Counts starts of specs with a warm pool served from it (hit) or cold (miss), for /metrics. */
  countWarmPoolClaim?: (specId: string, hit: boolean) => void;
  /** Asks an engine to be registered who it is, refusing a second row for one dockerd; absent, none is asked. */
  engineIdentity?: EngineIdentity;
  /** The self-test results of an engine's runtimes (engines/runtime-probes.ts); absent, none are shown. */
  runtimeProbes?: ServiceContext['runtimeProbes'];
  /** Where request lines go; the process logger when absent. */
  logger?: Logger;
  /** Why a new spec's image could not run a sandbox; absent, images go unchecked. */
  whyImageUnfit?: ServiceContext['whyImageUnfit'];
  /** Builds the images of specs made from a Dockerfile; absent, such specs are refused. */
  specImages?: ServiceContext['specImages'];
  /** Largest body POST /api/v1/sandbox-specs takes (a build's context in it); maxRequestBodyBytes when absent or smaller. */
  maxSpecCreateBodyBytes?: number;
  /** Host mode's domain for preview URLs (PREVIEW_DOMAIN): `{port}-{sandbox id}.{domain}`; absent, path mode only. */
  previewDomain?: string | null;
  /** Brings this replica's egress enforcement up to date now (after a PATCH of a sandbox's policy). */
  applyEgress?: ServiceContext['applyEgress'];
  /** Where clients reach this server (PUBLIC_URL), for the links it hands out; absent, each request's own origin. */
  publicUrl?: string;
}

/** Requests forwarded to a sandbox (its agent-server, or an app in it): their bodies are theirs to limit and read. */
const isProxied = (c: Context): boolean => /^\/api\/v1\/sandboxes\/[^/]*\/agent(\/|$)/.test(c.req.path) || isPreviewRequest(c.req.method, c.req.path);

/** A spec's creation, whose body may carry a build context. */
const isSpecCreate = (c: Context): boolean => c.req.method === 'POST' && c.req.path === '/api/v1/sandbox-specs';

export interface SandboxServerApp {
  app: OpenAPIHono;
  /**
   * What the HTTP server runs for each request: the fast paths of the agent proxy and preview URLs
   * for the requests they can take (see createProxyFastPath, createPreviewFastPath), the app for all others. `app.fetch` alone serves the same
   * answers, the proxy's through the app's own route.
   */
  listener: RequestListener;
  /** The two halves of `listener`: the fast paths, proxy's and previews' (true when one took the request), and the app on node:http. */
  fastPath: (req: IncomingMessage, res: ServerResponse) => boolean;
  appListener: RequestListener;
  /** Attaches WebSocket upgrades (proxy, conversation event sockets) to the HTTP server. */
  injectWebSocket: NodeWebSocket['injectWebSocket'];
  /** The background job behind POST /api/v1/app-conversations; start() resumes unfinished tasks. */
  startTasks: StartTaskRunner;
}

const DEFAULT_APP_CONVERSATION_SETTINGS: AppConversationSettings = {
  llm: { model: null, baseUrl: null },
  llmRelay: { origin: 'http://127.0.0.1:3001' },
  sandboxStartTimeoutMs: 300_000,
};

/**
 * The control plane's HTTP API. /alive, /health, /metrics, /docs and /openapi.json are open; everything under /api
 * needs an API key. Handlers write intent and kick the reconciler; only snapshots reach the engine,
 * through the runtime interface (SnapshotEngine).
 */
export function createSandboxServerApp(options: SandboxServerAppOptions): SandboxServerApp {
  const app = createApiApp();
  const metrics = options.metrics ?? createMetrics();
  // First, so that requests refused by authentication are logged and counted too.
  app.use('*', requestLogger({ logger: options.logger }));
  app.use('*', metricsMiddleware(metrics));
  const browser = options.browser ?? { allowedHosts: [], corsOrigins: [] };
  const previewDomain = options.previewDomain ?? null;
  // A preview host's traffic is its app's: the API's host, browser and key checks are not for it.
  app.use('*', (c, next) => previews.hostMode(c, next));
  app.use('*', ...browserGuard(browser));
  const { upgradeWebSocket, injectWebSocket } = createNodeWebSocket({ app });
  const targets = new TargetCache();
  const observedWrites = new ObservedWrites();
  options.reconciler.onSandboxWritten?.((sandboxId) => {
    targets.forget(sandboxId);
    observedWrites.written(sandboxId);
  });
  const ctx: AppConversationContext = {
    db: options.db,
    // Services kick the reconciler after each write of desired state: the proxy's cached target
    // may no longer hold from then on.
    reconciler: {
      kick: (sandboxId, engine) => {
        targets.forget(sandboxId);
        options.reconciler.kick(sandboxId, engine);
      },
      refillWarmPools: () => options.reconciler.refillWarmPools?.(),
    },
    countWarmPoolClaim: options.countWarmPoolClaim,
    engineIdentity: options.engineIdentity,
    runtimeProbes: options.runtimeProbes,
    whyImageUnfit: options.whyImageUnfit,
    specImages: options.specImages,
    knownTargets: targets,
    applyEgress: options.applyEgress,
    nextSandboxChange: (sandboxId, stop) => Promise.race([options.events.nextChange(), observedWrites.next(sandboxId, stop)]),
    maxRunningSandboxes: options.maxRunningSandboxes,
    publicUrl: options.publicUrl,
    runtimes: options.runtimes ?? { available: null },
    snapshots: options.snapshots ?? NO_SNAPSHOT_ENGINE,
    settings: options.appConversations ?? DEFAULT_APP_CONVERSATION_SETTINGS,
    agentClient: (target, clientOptions) => createAgentClient(target, clientOptions),
  };
  const startTasks = new StartTaskRunner(ctx, options.handOffStartTask);
  forgetTargetsOnEvents(options.events, targets);
  const routeDeps = {
    ctx,
    runner: startTasks,
    upgradeWebSocket,
    recordActivity: createActivityRecorder(ctx),
    targets,
    engineAvailable: async (sandboxId: string) => (await options.reconciler.engineAvailable?.(sandboxId)) ?? true,
  };
  const keys = { user: options.apiKeys, admin: options.adminKeys ?? [] };
  const previews = sandboxPortRoutes({ ...routeDeps, checkApiKey: apiKeyChecker(keys), previewDomain });
  const servePreviewFast = previews.fastPath({ admission: browserSteps(browser), corsOrigins: browser.corsOrigins.length > 0, metrics, logger: options.logger });
  const serveProxyFast = createProxyFastPath({
    admission: [...browserSteps(browser), apiKeyStep(keys)],
    targets,
    recordActivity: routeDeps.recordActivity,
    engineAvailable: routeDeps.engineAvailable,
    metrics,
    logger: options.logger,
  });

  registerHealthRoutes(app, ctx);
  // A person's first request: say where the API and its documentation are, rather than a bare 404.
  app.get('/', (c) =>
    c.json({ detail: 'This is sandbox-server. Its API is under /api/v1; read how to use it at /docs (the OpenAPI document: /openapi.json).' }),
  );
  const requireApiKey = apiKeyAuth(keys);
  // Preview traffic checks its own access: a browser holding a preview link has no API key.
  app.use('/api/*', (c, next) => (isPreviewRequest(c.req.method, c.req.path) ? next() : requireApiKey(c, next)));
  const engineChanges = requireAdmin('Changing the engines', ['POST', 'PUT', 'PATCH', 'DELETE']);
  app.use('/api/v1/engines', engineChanges);
  app.use('/api/v1/engines/*', engineChanges);
  app.use('/api/v1/settings', requireAdmin('Changing the shared settings', ['PATCH']));
  const maxBodyBytes = options.maxRequestBodyBytes ?? 4 * 1024 * 1024;
  app.use('/api/*', bodyLimit({ maxBytes: maxBodyBytes, skip: (c) => isProxied(c) || isSpecCreate(c) }));
  app.use('/api/v1/sandbox-specs', bodyLimit({ maxBytes: Math.max(maxBodyBytes, options.maxSpecCreateBodyBytes ?? 0), skip: (c) => !isSpecCreate(c) }));
  app.use('/api/*', jsonDepthLimit({ skip: isProxied }));
  app.use('/api/*', rejectNulBytes({ skip: isProxied }));
  registerSandboxSpecRoutes(app, ctx);
  registerSandboxRoutes(app, ctx);
  registerSnapshotRoutes(app, ctx);
  registerSandboxAgentProxy(app, routeDeps);
  previews.register(app);
  registerAppConversationRoutes(app, routeDeps);
  registerEventRoutes(app, {
    ctx: { ...ctx, feed: options.events, tail: new EventTail(options.db, options.events, logger), streams: new StreamLimit(options.maxEventStreamsPerKey ?? 100) },
    upgradeWebSocket,
  });
  registerWebhookRoutes(app, { db: ctx.db, webhookTargets: options.webhookTargets ?? createWebhookTargets({ allowedHosts: [] }) });
  registerEngineRoutes(app, ctx);
  registerSettingsRoutes(app, ctx);
  registerMetricsRoute(app, metrics);
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', { type: 'http', scheme: 'bearer' });
  registerApiDocs(app, {
    title: 'sandbox-server',
    version: '1',
    description: 'The control plane of sandbox-server: sandbox specs, sandboxes, snapshots, app conversations, lifecycle events, webhooks, engines, shared settings and a proxy to each sandbox agent-server.',
    security: keys.user.length + keys.admin.length > 0 ? [{ apiKey: [] }] : [],
    // apiKeyAuth guards /api/* alone.
    isOpen: (path) => !path.startsWith('/api/'),
  });
  const serveApp = getRequestListener(app.fetch);
  // A preview host's requests are its app's, whatever their path: never the agent proxy's.
  const serveFast = (req: IncomingMessage, res: ServerResponse) =>
    previewAddressOf(req.headers.host, previewDomain) === null ? serveProxyFast(req, res) || servePreviewFast(req, res) : servePreviewFast(req, res);
  const listener: RequestListener = (req, res) => {
    if (!serveFast(req, res)) void serveApp(req, res);
  };
  return { app, listener, fastPath: serveFast, appListener: serveApp, injectWebSocket, startTasks };
}

/**
 * Another replica's reconciler may have changed a sandbox this one's proxy has cached: each status
 * change commits a lifecycle event, which wakes every replica's feed. Forgetting every target costs
 * one database read per sandbox proxied afterwards.
 */
function forgetTargetsOnEvents(events: EventFeed, targets: TargetCache): void {
  void (async () => {
    while (!events.closing.aborted) {
      await events.nextChange();
      targets.forget();
    }
  })();
}
