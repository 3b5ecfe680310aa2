import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { createNodeWebSocket, type NodeWebSocket } from '@hono/node-ws';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AgentUser } from './agent-user.js';
import packageJson from '../../package.json' with { type: 'json' };
import { SESSION_KEY_HEADER } from '../contracts/agent-server/session-key.js';
import { createApiApp } from '../http/app.js';
import { browserGuard, browserSteps, type BrowserGuardOptions } from '../http/browser-guard/index.js';
import { registerApiDocs } from '../http/docs/index.js';
import { createLlmMetrics, createMetrics, metricsMiddleware, registerMetricsRoute } from '../http/metrics/index.js';
import { requestLogger } from '../http/request-log/index.js';
import { bodyLimit, jsonDepthLimit } from '../http/request-guards/index.js';
import { isOpenPath, isValidSessionKey, requireSessionKey, sessionKeyDigestsOf, sessionKeyStep } from './auth.js';
import { BashCommands } from './bash/bash-commands.js';
import { BashEventLog } from './bash/bash-event-log.js';
import { ConversationRegistry } from './conversations/registry.js';
import type { ConversationContext } from './services/context.js';
import { listConversationModels } from './services/conversations/list-conversation-models.js';
import { getConversation } from './services/conversations/get-conversation.js';
import { resumeConversations } from './services/conversations/resume-conversations.js';
import { takeDataDir } from './conversations/data-owner.js';
import { findEventLog } from './services/events/find-event-log.js';
import { sendSocketMessage } from './services/events/send-socket-message.js';
import { registerAcpConversationRoutes } from './routes/acp-conversations/index.js';
import { registerBashRoutes } from './routes/bash/index.js';
import { registerCatalogRoutes } from './routes/catalog/index.js';
import { registerConversationRoutes } from './routes/conversations/index.js';
import { registerEventRoutes } from './routes/events/index.js';
import { registerGitRoutes } from './routes/git/index.js';
import { registerDownloadTrajectory, registerFileRoutes, UNPACK_PATH } from './routes/files/index.js';
import { registerServerDetails } from './routes/server-details.js';
import { createListeningAddresses } from './ports/listening-address.js';
import { createPortsFastPath } from './ports/ports-fast-path.js';
import { PORTS_PREFIX, registerPortRoutes } from './routes/ports/index.js';
import { registerBashSocket, registerEventSocket, type EventStreamSource } from './stream/index.js';

/** The event import route, whose body is streamed (see jsonDepthLimit below). */
const IMPORT_PATH = /^\/api\/conversations\/[^/]+\/events\/import$/;

export interface AgentServerOptions {
  dataDir: string;
  /** Accepted session API keys; with no key nor digest, authentication is off. */
  sessionKeys: readonly string[];
  /** Accepted session API keys given by their SHA-256 digests (64 hex digits each) instead. */
  sessionKeyDigests?: readonly string[];
  /** Host names served besides loopback ones, and origins allowed to call from a browser. */
  browser?: BrowserGuardOptions;
  /** Who runs the agent's commands (terminal tool, /api/bash, git for /api/git) and owns its files; this process's user when absent. */
  agentUser?: AgentUser;
  /** Where /api/bash commands run by default; the process's working directory when absent. */
  workspaceDir?: string;
  /** Largest request body accepted, in bytes; DEFAULT_MAX_REQUEST_BODY_BYTES when absent. */
  maxRequestBodyBytes?: number;
  /** Values every conversation masks besides its own secrets (the spec's secret initial_env). */
  maskedValues?: readonly string[];
  /** Whose data `dataDir` holds (a sandbox's id): data recorded under another is a copy (conversations/data-owner.ts). */
  dataOwner?: string;
}

/** 64 MB: an import of a long conversation fits; a body that would exhaust memory does not. */
export const DEFAULT_MAX_REQUEST_BODY_BYTES = 64 * 1024 * 1024;

export interface AgentServer {
  app: OpenAPIHono;
  /** What the conversation and event verbs (services/) take. */
  ctx: ConversationContext;
  /**
   * What the HTTP server runs for each request: the fast path of requests to apps in the sandbox
   * (ports/ports-fast-path.ts) for those it can take, the app for all others. `app.fetch` alone
   * serves the same answers.
   */
  listener: RequestListener;
  /** The two halves of `listener`: the fast path (true when it took the request), and the app on node:http. */
  fastPath: (req: IncomingMessage, res: ServerResponse) => boolean;
  appListener: RequestListener;
  /** Attaches the WebSocket upgrade handler to the HTTP server that serves `app`. */
  injectWebSocket: NodeWebSocket['injectWebSocket'];
  /** Flushes metadata and closes the event logs; call after the HTTP server stopped. */
  close(): Promise<void>;
}

/** The agent-server over a data directory: its conversations are loaded before this resolves. */
export async function createAgentServerApp(options: AgentServerOptions): Promise<AgentServer> {
  const startedAtMs = Date.now();
  const metrics = createMetrics();
  const countLlmCall = createLlmMetrics(metrics.registry);
  const conversations = await ConversationRegistry.open({
    dataDir: options.dataDir,
    agentUser: options.agentUser,
    maskedValues: options.maskedValues,
    onLlmCall: (call) =>
      countLlmCall({
        model: call.model,
        promptTokens: call.usage?.prompt_tokens ?? 0,
        completionTokens: call.usage?.completion_tokens ?? 0,
        cacheReadTokens: call.usage?.cache_read_tokens ?? 0,
        cacheWriteTokens: call.usage?.cache_write_tokens ?? 0,
        reasoningTokens: call.usage?.reasoning_tokens ?? 0,
        cost: call.cost,
        latencySeconds: call.latencyMs / 1000,
      }),
  });
  const ctx: ConversationContext = { conversations };
  await resumeConversations(ctx, await takeDataDir(options.dataDir, options.dataOwner));
  const app = createApiApp();
  const { upgradeWebSocket, injectWebSocket } = createNodeWebSocket({ app });
  app.use('*', requestLogger());
  app.use('*', metricsMiddleware(metrics));
  const browser = options.browser ?? { allowedHosts: [], corsOrigins: [] };
  app.use('*', ...browserGuard(browser));

  const acceptedKeys = sessionKeyDigestsOf(options.sessionKeys, options.sessionKeyDigests);
  app.use('*', requireSessionKey(acceptedKeys));
  // Bodies for apps in the sandbox are theirs to limit and read; an archive unpacked goes to disk as it streams.
  const toApp = (path: string) => path.startsWith(PORTS_PREFIX);
  const maxBytes = options.maxRequestBodyBytes ?? DEFAULT_MAX_REQUEST_BODY_BYTES;
  app.use('*', bodyLimit({ maxBytes, skip: (c) => toApp(c.req.path) || c.req.path === UNPACK_PATH }));
  // Imports check each record's depth as they stream it, rather than reading the body whole here.
  app.use('*', jsonDepthLimit({ skip: (c) => toApp(c.req.path) || (c.req.method === 'POST' && IMPORT_PATH.test(c.req.path)) }));
  registerServerDetails(app, { startedAtMs, idleMillis: () => conversations.idleMillis() });
  registerConversationRoutes(app, ctx);
  registerAcpConversationRoutes(app, ctx);
  registerEventRoutes(app, ctx);
  const workspaceDir = options.workspaceDir ?? process.cwd();
  const bashEvents = await BashEventLog.open(join(options.dataDir, 'bash_events.ndjson'));
  const bashCommands = new BashCommands(bashEvents, workspaceDir, options.agentUser);
  registerBashRoutes(app, { commands: bashCommands, events: bashEvents });
  registerGitRoutes(app, { workspaceDir, agentUser: options.agentUser });
  registerFileRoutes(app, options.agentUser);
  registerDownloadTrajectory(app, ctx);
  await registerCatalogRoutes(app, { configuredModels: () => listConversationModels(ctx), workspaceDir, agentUser: options.agentUser });
  const isValidKey = (candidate: string | undefined) => isValidSessionKey(acceptedKeys, candidate);
  registerEventSocket(app, { upgradeWebSocket, source: streamSource(ctx), isValidSessionKey: isValidKey });
  registerBashSocket(app, { upgradeWebSocket, events: bashEvents, commands: bashCommands, isValidSessionKey: isValidKey });
  const listeningAddresses = createListeningAddresses();
  registerPortRoutes(app, { upgradeWebSocket, listeningAddresses });
  registerMetricsRoute(app, metrics);
  app.openAPIRegistry.registerComponent('securitySchemes', 'sessionApiKey', { type: 'apiKey', in: 'header', name: SESSION_KEY_HEADER });
  registerApiDocs(app, {
    title: 'agent-server',
    version: packageJson.version,
    security: acceptedKeys.length > 0 ? [{ sessionApiKey: [] }] : [],
    isOpen: isOpenPath,
  });

  const serveApp = getRequestListener(app.fetch);
  // With CORS origins the app adds CORS headers, which the fast path does not: it leaves such servers' requests to the app.
  const servePortFast: AgentServer['fastPath'] =
    browser.corsOrigins.length > 0
      ? () => false
      : createPortsFastPath({ admission: [...browserSteps(browser), sessionKeyStep(acceptedKeys)], keyed: acceptedKeys.length > 0, listeningAddresses, metrics });
  const listener: RequestListener = (req, res) => {
    if (!servePortFast(req, res)) void serveApp(req, res);
  };
  return { app, ctx, listener, fastPath: servePortFast, appListener: serveApp, injectWebSocket, close: () => conversations.close() };
}

/** The event stream's view of the conversations. */
function streamSource(ctx: ConversationContext): EventStreamSource {
  return {
    eventLog: (conversationId) => findEventLog(ctx, conversationId),
    fullState: async (conversationId) => getConversation(ctx, conversationId),
    sendMessage: (conversationId, message) => sendSocketMessage(ctx, { conversationId, message }),
    onLiveFrame: (conversationId, listener) => ctx.conversations.live.subscribe(conversationId, listener),
  };
}
