/**
 * Every route of /api/v1 the client calls, by method and OpenAPI path template. The client builds
 * each request from this table, and a test checks the table against the server's OpenAPI document
 * both ways, so a route renamed on either side fails the build instead of a user's script.
 */
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface Operation {
  method: HttpMethod;
  path: string;
}

export const SANDBOX_SERVER_OPERATIONS = {
  searchSandboxSpecs: { method: 'get', path: '/api/v1/sandbox-specs/search' },
  batchGetSandboxSpecs: { method: 'get', path: '/api/v1/sandbox-specs' },
  createSandboxSpec: { method: 'post', path: '/api/v1/sandbox-specs' },
  deleteSandboxSpec: { method: 'delete', path: '/api/v1/sandbox-specs/{id}' },
  getSpecBuildLog: { method: 'get', path: '/api/v1/sandbox-specs/{id}/build-log' },

  searchSandboxes: { method: 'get', path: '/api/v1/sandboxes/search' },
  batchGetSandboxes: { method: 'get', path: '/api/v1/sandboxes' },
  startSandbox: { method: 'post', path: '/api/v1/sandboxes' },
  pauseSandbox: { method: 'post', path: '/api/v1/sandboxes/{id}/pause' },
  resumeSandbox: { method: 'post', path: '/api/v1/sandboxes/{id}/resume' },
  deleteSandbox: { method: 'delete', path: '/api/v1/sandboxes/{id}' },
  sandboxLlmUsage: { method: 'get', path: '/api/v1/sandboxes/{id}/llm-usage' },
  updateSandbox: { method: 'patch', path: '/api/v1/sandboxes/{id}' },
  getSandboxEgress: { method: 'get', path: '/api/v1/sandboxes/{id}/egress' },

  takeSnapshot: { method: 'post', path: '/api/v1/sandboxes/{id}/snapshots' },
  forkSandbox: { method: 'post', path: '/api/v1/sandboxes/{id}/fork' },
  searchSnapshots: { method: 'get', path: '/api/v1/snapshots/search' },
  batchGetSnapshots: { method: 'get', path: '/api/v1/snapshots' },
  deleteSnapshot: { method: 'delete', path: '/api/v1/snapshots/{id}' },

  registerEngine: { method: 'post', path: '/api/v1/engines' },
  searchEngines: { method: 'get', path: '/api/v1/engines' },
  cordonEngine: { method: 'post', path: '/api/v1/engines/{name}/cordon' },
  uncordonEngine: { method: 'post', path: '/api/v1/engines/{name}/uncordon' },
  drainEngine: { method: 'post', path: '/api/v1/engines/{name}/drain' },
  removeEngine: { method: 'delete', path: '/api/v1/engines/{name}' },

  getSettings: { method: 'get', path: '/api/v1/settings' },
  updateSettings: { method: 'patch', path: '/api/v1/settings' },

  agentGet: { method: 'get', path: '/api/v1/sandboxes/{id}/agent/{path}' },
  agentPost: { method: 'post', path: '/api/v1/sandboxes/{id}/agent/{path}' },
  agentPut: { method: 'put', path: '/api/v1/sandboxes/{id}/agent/{path}' },
  agentPatch: { method: 'patch', path: '/api/v1/sandboxes/{id}/agent/{path}' },
  agentDelete: { method: 'delete', path: '/api/v1/sandboxes/{id}/agent/{path}' },

  listSandboxPorts: { method: 'get', path: '/api/v1/sandboxes/{id}/ports' },
  createPreviewToken: { method: 'post', path: '/api/v1/sandboxes/{id}/ports/{port}/token' },
  revokePreviewTokens: { method: 'delete', path: '/api/v1/sandboxes/{id}/preview-tokens' },
  previewGet: { method: 'get', path: '/api/v1/sandboxes/{id}/ports/{port}/{path}' },
  previewPost: { method: 'post', path: '/api/v1/sandboxes/{id}/ports/{port}/{path}' },
  previewPut: { method: 'put', path: '/api/v1/sandboxes/{id}/ports/{port}/{path}' },
  previewPatch: { method: 'patch', path: '/api/v1/sandboxes/{id}/ports/{port}/{path}' },
  previewDelete: { method: 'delete', path: '/api/v1/sandboxes/{id}/ports/{port}/{path}' },

  startAppConversation: { method: 'post', path: '/api/v1/app-conversations' },
  searchAppConversations: { method: 'get', path: '/api/v1/app-conversations/search' },
  countAppConversations: { method: 'get', path: '/api/v1/app-conversations/count' },
  batchGetAppConversations: { method: 'get', path: '/api/v1/app-conversations' },
  getAppConversation: { method: 'get', path: '/api/v1/app-conversations/{id}' },
  updateAppConversation: { method: 'patch', path: '/api/v1/app-conversations/{id}' },
  deleteAppConversation: { method: 'delete', path: '/api/v1/app-conversations/{id}' },
  searchAppConversationEvents: { method: 'get', path: '/api/v1/app-conversations/{id}/events/search' },
  sendAppConversationMessage: { method: 'post', path: '/api/v1/app-conversations/{id}/events' },
  searchConversationEvents: { method: 'get', path: '/api/v1/conversation/{conversation_id}/events/search' },
  countConversationEvents: { method: 'get', path: '/api/v1/conversation/{conversation_id}/events/count' },
  batchGetConversationEvents: { method: 'get', path: '/api/v1/conversation/{conversation_id}/events' },

  searchStartTasks: { method: 'get', path: '/api/v1/app-conversations/start-tasks/search' },
  countStartTasks: { method: 'get', path: '/api/v1/app-conversations/start-tasks/count' },
  batchGetStartTasks: { method: 'get', path: '/api/v1/app-conversations/start-tasks' },

  searchLifecycleEvents: { method: 'get', path: '/api/v1/events/search' },
  streamLifecycleEvents: { method: 'get', path: '/api/v1/events/stream' },

  createWebhook: { method: 'post', path: '/api/v1/webhooks' },
  listWebhooks: { method: 'get', path: '/api/v1/webhooks' },
  getWebhook: { method: 'get', path: '/api/v1/webhooks/{id}' },
  updateWebhook: { method: 'patch', path: '/api/v1/webhooks/{id}' },
  deleteWebhook: { method: 'delete', path: '/api/v1/webhooks/{id}' },
  searchWebhookDeliveries: { method: 'get', path: '/api/v1/webhooks/{id}/deliveries' },
  redeliverWebhookDelivery: { method: 'post', path: '/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver' },
} as const satisfies Record<string, Operation>;

export type OperationName = keyof typeof SANDBOX_SERVER_OPERATIONS;

/**
 * The conversation's live events, a WebSocket route: OpenAPI cannot describe it, so it is not in
 * the table above and is tested by use instead.
 */
export const EVENT_SOCKET_PATH = '/api/v1/app-conversations/{id}/events/socket';

/** One TCP connection to a sandbox port over a WebSocket (`sandboxctl port-forward`), likewise. */
export const PORT_FORWARD_PATH = '/api/v1/sandboxes/{id}/port-forward/{port}';

/** `/a/{id}/b` with `{id: 'x/y'}` -> `/a/x%2Fy/b`; `{path}` of the proxy keeps its slashes. */
export function fillPath(template: string, params: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name} for ${template}`);
    return name === 'path' ? value.split('/').map(encodeURIComponent).join('/') : encodeURIComponent(value);
  });
}
