import { z } from '@hono/zod-openapi';
import { SESSION_KEY_QUERY } from '../../contracts/agent-server/session-key.js';
import { bridgeWebSocket } from '../../http/bridge-websocket.js';
import { forwardHttp } from '../proxy/forward-http.js';
import { PROXY_ROUTE } from '../proxy/fast-path.js';
import { ErrorDetailSchema } from '../models/common.js';
import type { AppConversationRouteRegistrar } from './app-conversations/deps.js';
import { parsePath } from './websocket-route.js';
import { reachSandbox, sendToSandbox } from './reach-sandbox.js';

const PROXY_PATH = '/api/v1/sandboxes/{id}/agent/{path}';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const detail = (description: string) => ({ description, content: { 'application/json': { schema: ErrorDetailSchema } } });
const ProxyParamsSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(128)
    .refine((id) => !id.includes('\0'), 'Must not contain NUL bytes'),
});

/**
 * `/api/v1/sandboxes/{id}/agent/{path...}`: any method, query and body go on to that sandbox's
 * agent-server with its session key, and the answer streams back; WebSocket upgrades are bridged.
 * A paused sandbox is resumed first when its spec allows it, else 409.
 */
export const registerSandboxAgentProxy: AppConversationRouteRegistrar = (app, deps) => {
  for (const method of METHODS) {
    app.openAPIRegistry.registerPath({
      method,
      path: PROXY_PATH,
      tags: ['Sandboxes'],
      summary: "Forward a request to the sandbox's agent-server",
      description: 'The session key is added; the answer is streamed back unchanged. WebSocket upgrades are bridged too.',
      request: { params: ProxyParamsSchema.extend({ path: z.string() }) },
      responses: {
        200: { description: "The agent-server's answer" },
        404: detail('Sandbox not found'),
        409: detail('The sandbox is paused (and its spec does not resume on access), deleted or failed'),
        502: detail("The sandbox's agent-server could not be reached"),
        503: detail("The sandbox's container engine is unavailable, or the sandbox did not come up in time; see Retry-After"),
      },
    });
  }

  app.all(PROXY_ROUTE, async (c) => {
    const { id } = parsePath(ProxyParamsSchema, { id: c.req.param('id') });
    const target = await reachSandbox(deps, id);
    const url = new URL(c.req.url);
    const path = url.pathname.slice(url.pathname.indexOf('/agent/') + '/agent'.length);
    if (c.req.header('upgrade')?.toLowerCase() === 'websocket') {
      url.searchParams.set(SESSION_KEY_QUERY, target.sessionApiKey);
      return deps.upgradeWebSocket(c, bridgeWebSocket(`${target.baseUrl.replace(/^http/, 'ws')}${path}?${url.searchParams}`, () => deps.recordActivity(id)));
    }
    return sendToSandbox(deps, id, () => forwardHttp(c.req.raw, target, path, url.search));
  });
};
