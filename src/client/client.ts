import { posix } from 'node:path';
import { followEvents, type FollowEventsOptions } from './event-stream.js';
import { followLifecycleEvents, type FollowLifecycleEventsOptions } from './lifecycle-stream.js';
import { type HttpMethod, type OperationName, PORT_FORWARD_PATH } from './operations.js';
import { type QueryValue, Transport, type TransportOptions } from './transport.js';
import type {
  AppConversation,
  AppConversationFilter,
  AppConversationStartRequest,
  AppConversationStartTask,
  CreatedWebhook,
  CreateWebhookRequest,
  BashOutput,
  ConversationEvent,
  CreateSandboxSpecRequest,
  EngineInfo,
  RegisterEngineRequest,
  SearchEnginesQuery,
  Settings,
  UpdateSettingsRequest,
  EventSearchQuery,
  OpenHandsEventFilter,
  OpenHandsEventSearchQuery,
  ExecuteBashRequest,
  LifecycleEvent,
  Page,
  PreviewToken,
  SandboxEgressInfo,
  SandboxInfo,
  SandboxLlmUsage,
  SandboxPort,
  SandboxSpecInfo,
  SearchAppConversationsQuery,
  SearchLifecycleEventsQuery,
  SearchSandboxesQuery,
  SearchSandboxSpecsQuery,
  SearchSnapshotsQuery,
  SearchStartTasksQuery,
  SnapshotInfo,
  SendMessageRequest,
  StartSandboxRequest,
  StartTaskFilter,
  Success,
  SearchWebhookDeliveriesQuery,
  UpdateAppConversationRequest,
  UpdateSandboxRequest,
  UpdateWebhookRequest,
  Webhook,
  WebhookDelivery,
} from './types.js';

/** A sandbox's ports: preview links, their revocation, and the port-forward socket. */
function previewsOf(t: Transport) {
  return {
    /** The spec's exposed ports (but the agent-server's) with their preview URLs. */
    ports: (id: string) => t.json<SandboxPort[]>('listSandboxPorts', { params: { id } }),
    /** A preview link to one port (a number or an exposed port's name), valid `expiresIn` seconds (default 3600). */
    previewToken: (id: string, port: number | string, expiresIn?: number) =>
      t.json<PreviewToken>('createPreviewToken', { params: { id, port: String(port) }, json: expiresIn === undefined ? {} : { expires_in: expiresIn } }),
    /** Ends every preview link of the sandbox given so far. */
    revokePreviewTokens: (id: string) => t.json<Success>('revokePreviewTokens', { params: { id } }),
    /** The URL of a WebSocket carrying one TCP connection to `port` in the sandbox, and the headers to open it with. */
    portForwardSocket: (id: string, port: number) => ({
      url: t.url(PORT_FORWARD_PATH.replace('{id}', encodeURIComponent(id)).replace('{port}', String(port))).toString().replace(/^http/, 'ws'),
      headers: t.authHeaders(),
    }),
  };
}

export type SandboxServerClientOptions = TransportOptions;

/** A request to a sandbox's agent-server through the control plane's proxy. */
export interface AgentRequest {
  method?: HttpMethod;
  query?: Record<string, QueryValue>;
  json?: unknown;
  body?: RequestInit['body'];
  signal?: AbortSignal;
}

const AGENT_OPERATIONS: Record<HttpMethod, OperationName> = {
  get: 'agentGet',
  post: 'agentPost',
  put: 'agentPut',
  patch: 'agentPatch',
  delete: 'agentDelete',
};

/** Conversations the control plane starts in sandboxes, and their start tasks. */
function appConversationsOf(t: Transport) {
  return {
    /** Answers at once with the start task; follow it with startTasks.batchGet. */
    start: (request: AppConversationStartRequest) => t.json<AppConversationStartTask>('startAppConversation', { json: request }),
    /** Holds the request until the conversation is ready (or its start failed), at most timeoutSeconds. */
    startAndWait: (request: AppConversationStartRequest, timeoutSeconds?: number) =>
      t.json<AppConversation>('startAppConversation', { json: request, query: { wait: 'true', timeout: timeoutSeconds } }),
    search: (query: SearchAppConversationsQuery = {}) => t.json<Page<AppConversation>>('searchAppConversations', { query }),
    count: (filter: AppConversationFilter = {}) => t.json<number>('countAppConversations', { query: filter }),
    batchGet: (ids: readonly string[]) => t.json<(AppConversation | null)[]>('batchGetAppConversations', { query: { ids } }),
    get: (id: string) => t.json<AppConversation>('getAppConversation', { params: { id } }),
    update: (id: string, request: UpdateAppConversationRequest) =>
      t.json<AppConversation>('updateAppConversation', { params: { id }, json: request }),
    delete: (id: string) => t.json<Success>('deleteAppConversation', { params: { id } }),
    searchEvents: (id: string, query: EventSearchQuery = {}) =>
      t.json<Page<ConversationEvent>>('searchAppConversationEvents', { params: { id }, query }),
    sendMessage: (id: string, message: SendMessageRequest) =>
      t.json<Success>('sendAppConversationMessage', { params: { id }, json: message }),
    /** The same events through OpenHands' app-server routes (/api/v1/conversation/{id}/events). */
    openHandsEvents: {
      search: (conversationId: string, query: OpenHandsEventSearchQuery = {}) =>
        t.json<Page<ConversationEvent>>('searchConversationEvents', { params: { conversation_id: conversationId }, query }),
      count: (conversationId: string, filter: OpenHandsEventFilter = {}) =>
        t.json<number>('countConversationEvents', { params: { conversation_id: conversationId }, query: filter }),
      batchGet: (conversationId: string, ids: readonly string[]) =>
        t.json<(ConversationEvent | null)[]>('batchGetConversationEvents', { params: { conversation_id: conversationId }, query: { id: ids } }),
    },
    /** The conversation's events as they happen, over a WebSocket that reconnects where it left off. */
    followEvents: (id: string, options?: FollowEventsOptions) => followEvents(t, id, options),
    startTasks: {
      search: (query: SearchStartTasksQuery = {}) => t.json<Page<AppConversationStartTask>>('searchStartTasks', { query }),
      count: (filter: StartTaskFilter = {}) => t.json<number>('countStartTasks', { query: filter }),
      batchGet: (ids: readonly string[]) => t.json<(AppConversationStartTask | null)[]>('batchGetStartTasks', { query: { ids } }),
    },
  };
}

/** A sandbox's agent-server, reached through the control plane (which adds its session key). */
function agentClient(t: Transport, sandboxId: string) {
  const params = (path: string) => ({ id: sandboxId, path: path.replace(/^\/+/, '') });
  return {
    /** Any agent-server route, e.g. `fetch('/api/conversations/search')`; the answer whatever its status. */
    fetch: (path: string, { method = 'get', ...request }: AgentRequest = {}): Promise<Response> =>
      t.request(AGENT_OPERATIONS[method], { ...request, params: params(path) }),
    /** Runs `bash -c command` in the sandbox and waits for it to end. */
    executeBashCommand: (request: ExecuteBashRequest, signal?: AbortSignal) =>
      t.json<BashOutput>('agentPost', { params: params('/api/bash/execute_bash_command'), json: request, signal }),
    /** Writes `content` at the absolute `path` in the sandbox, creating its directories. */
    uploadFile: (path: string, content: Blob, signal?: AbortSignal) => {
      const form = new FormData();
      form.append('file', content, posix.basename(path));
      return t.json<Success>('agentPost', { params: params('/api/file/upload'), query: { path }, body: form, signal });
    },
    /** The file at the absolute `path` in the sandbox, streamed. */
    downloadFile: async (path: string, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>> => {
      const response = await t.ok('agentGet', { params: params('/api/file/download'), query: { path }, signal });
      return response.body ?? new Blob([]).stream();
    },
  };
}

/**
 * A typed client of the sandbox-server's /api/v1. Methods answer the server's JSON as typed by its
 * own models, throw SandboxServerError (status + detail) for error answers and
 * SandboxServerUnreachableError when there is no answer.
 */
export function createSandboxServerClient(options: SandboxServerClientOptions) {
  const t = new Transport(options);

  return {
    baseUrl: t.baseUrl,

    sandboxSpecs: {
      search: (query: SearchSandboxSpecsQuery = {}) => t.json<Page<SandboxSpecInfo>>('searchSandboxSpecs', { query }),
      batchGet: (ids: readonly string[]) => t.json<(SandboxSpecInfo | null)[]>('batchGetSandboxSpecs', { query: { id: ids } }),
      create: (request: CreateSandboxSpecRequest) => t.json<SandboxSpecInfo>('createSandboxSpec', { json: request }),
      delete: (id: string) => t.json<Success>('deleteSandboxSpec', { params: { id } }),
      /** The build log of a spec made from a Dockerfile, as text; with `follow`, streamed until the build ends. */
      buildLog: async (id: string, options: { follow?: boolean; signal?: AbortSignal } = {}): Promise<ReadableStream<Uint8Array>> => {
        const response = await t.ok('getSpecBuildLog', { params: { id }, query: { follow: options.follow ? 'true' : 'false' }, signal: options.signal });
        return response.body ?? new Blob([]).stream();
      },
    },

    snapshots: {
      search: (query: SearchSnapshotsQuery = {}) => t.json<Page<SnapshotInfo>>('searchSnapshots', { query }),
      batchGet: (ids: readonly string[]) => t.json<(SnapshotInfo | null)[]>('batchGetSnapshots', { query: { id: ids } }),
      delete: (id: string) => t.json<Success>('deleteSnapshot', { params: { id } }),
    },

    engines: {
      /** Every replica drives the new engine without a restart. */
      register: (request: RegisterEngineRequest) => t.json<EngineInfo>('registerEngine', { json: request }),
      search: (query: SearchEnginesQuery = {}) => t.json<Page<EngineInfo>>('searchEngines', { query }),
      cordon: (name: string) => t.json<EngineInfo>('cordonEngine', { params: { name } }),
      uncordon: (name: string) => t.json<EngineInfo>('uncordonEngine', { params: { name } }),
      drain: (name: string) => t.json<EngineInfo>('drainEngine', { params: { name } }),
      /** Only an engine without live sandboxes or snapshots (else 409). */
      remove: (name: string) => t.json<Success>('removeEngine', { params: { name } }),
    },

    /** The installation's shared settings; changing them takes an admin key and holds for every replica. */
    settings: {
      get: () => t.json<Settings>('getSettings'),
      update: (request: UpdateSettingsRequest) => t.json<Settings>('updateSettings', { json: request }),
    },

    sandboxes: {
      search: (query: SearchSandboxesQuery = {}) => t.json<Page<SandboxInfo>>('searchSandboxes', { query }),
      batchGet: (ids: readonly string[]) => t.json<(SandboxInfo | null)[]>('batchGetSandboxes', { query: { id: ids } }),
      /** Answers at once with status STARTING; the default spec when none is named. */
      start: (request: StartSandboxRequest = {}) => t.json<SandboxInfo>('startSandbox', { json: request }),
      pause: (id: string) => t.json<Success>('pauseSandbox', { params: { id } }),
      resume: (id: string) => t.json<Success>('resumeSandbox', { params: { id } }),
      delete: (id: string) => t.json<Success>('deleteSandbox', { params: { id } }),
      /** What its agents used of their LLM, as the control plane's LLM relay counted it. */
      llmUsage: (id: string) => t.json<SandboxLlmUsage>('sandboxLlmUsage', { params: { id } }),
      /** What an allowlist sandbox may reach: its network and egress policy. */
      egress: (id: string) => t.json<SandboxEgressInfo>('getSandboxEgress', { params: { id } }),
      /** Changes the sandbox's egress policy; in force when it answers. */
      update: (id: string, request: UpdateSandboxRequest) => t.json<SandboxEgressInfo>('updateSandbox', { params: { id }, json: request }),
      /** Snapshots the sandbox (pausing it for that instant if it runs). */
      snapshot: (id: string, name?: string) => t.json<SnapshotInfo>('takeSnapshot', { params: { id }, json: name === undefined ? {} : { name } }),
      /** Snapshot + start from it: the new sandbox, STARTING. */
      fork: (id: string, name?: string) => t.json<SandboxInfo>('forkSandbox', { params: { id }, json: name === undefined ? {} : { name } }),
      /** The sandbox's agent-server, reached through the control plane (which adds its session key). */
      agent: (sandboxId: string) => agentClient(t, sandboxId),
      ...previewsOf(t),
    },

    appConversations: appConversationsOf(t),

    events: {
      search: (query: SearchLifecycleEventsQuery = {}) => t.json<Page<LifecycleEvent>>('searchLifecycleEvents', { query }),
      /** The id of the newest event ('0' when there is none): follow after it to see only what comes next. */
      latestId: async (): Promise<string> => {
        const page = await t.json<Page<LifecycleEvent>>('searchLifecycleEvents', { query: { sort_order: 'TIMESTAMP_DESC', limit: 1 } });
        return page.items[0]?.id ?? '0';
      },
      /** Events after `afterEventId` as they commit, over Server-Sent Events that reconnect where they left off. */
      follow: (options: FollowLifecycleEventsOptions) => followLifecycleEvents(t, options),
    },

    webhooks: {
      /** The answer carries the signing secret, which is never shown again. */
      create: (request: CreateWebhookRequest) => t.json<CreatedWebhook>('createWebhook', { json: request }),
      list: () => t.json<Webhook[]>('listWebhooks'),
      get: (id: string) => t.json<Webhook>('getWebhook', { params: { id } }),
      update: (id: string, request: UpdateWebhookRequest) => t.json<Webhook>('updateWebhook', { params: { id }, json: request }),
      delete: (id: string) => t.json<Success>('deleteWebhook', { params: { id } }),
      deliveries: (id: string, query: SearchWebhookDeliveriesQuery = {}) =>
        t.json<Page<WebhookDelivery>>('searchWebhookDeliveries', { params: { id }, query }),
      redeliver: (id: string, deliveryId: string) =>
        t.json<WebhookDelivery>('redeliverWebhookDelivery', { params: { id, delivery_id: deliveryId } }),
    },
  };
}

export type SandboxServerClient = ReturnType<typeof createSandboxServerClient>;
export type AgentServerProxy = ReturnType<SandboxServerClient['sandboxes']['agent']>;
