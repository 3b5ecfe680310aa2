import { createRoute, z } from '@hono/zod-openapi';
import { EventSearchQuerySchema } from '../../../contracts/agent-server/event-queries.js';
import { SendMessageRequestSchema } from '../../../contracts/agent-server/conversation-requests.js';
import { SESSION_KEY_QUERY } from '../../../contracts/agent-server/session-key.js';
import { findAppConversation } from '../../services/app-conversations/find-app-conversation.js';
import { bridgeWebSocket } from '../../../http/bridge-websocket.js';
import { forwardHttp } from '../../proxy/forward-http.js';
import { waitForAgentServer } from '../../services/sandboxes/wait-for-agent-server.js';
import { errorResponses, SuccessSchema } from '../../models/common.js';
import { parsePath, requireUpgrade } from '../websocket-route.js';
import { AppConversationIdParamsSchema } from './item.js';
import type { AppConversationRouteDeps, AppConversationRouteRegistrar } from './deps.js';

/** How long a request through the control plane waits for a resuming or starting sandbox. */
const ACCESS_TIMEOUT_MS = 120_000;

export const EventPageSchema = z.object({ items: z.array(z.record(z.string(), z.unknown())), next_page_id: z.string().nullable() });

/**
 * Both routes stream the agent-server's answer back as it came, so its failures reach the client
 * unchanged; the handlers return that answer, not a body built here.
 */
export const AGENT_SERVER_FAILED = { description: 'The agent-server failed or could not be reached' };

const search = createRoute({
  method: 'get',
  path: '/api/v1/app-conversations/{id}/events/search',
  tags: ['App conversations'],
  summary: "Search the conversation's events (the agent-server's search, passed through)",
  request: { params: AppConversationIdParamsSchema, query: EventSearchQuerySchema },
  responses: {
    200: { description: 'A page of events', content: { 'application/json': { schema: EventPageSchema } } },
    ...errorResponses(401, 404, 409),
    502: AGENT_SERVER_FAILED,
  },
});

const send = createRoute({
  method: 'post',
  path: '/api/v1/app-conversations/{id}/events',
  tags: ['App conversations'],
  summary: 'Send a message to the conversation',
  request: {
    params: AppConversationIdParamsSchema,
    body: { content: { 'application/json': { schema: SendMessageRequestSchema } } },
  },
  responses: {
    200: { description: 'Recorded', content: { 'application/json': { schema: SuccessSchema } } },
    ...errorResponses(401, 404, 409),
    502: AGENT_SERVER_FAILED,
  },
});

/** The agent-server of the conversation's sandbox (resumed first when its spec allows), and that sandbox. */
export async function conversationTarget(deps: AppConversationRouteDeps, conversationId: string) {
  const { sandboxId } = await findAppConversation(deps.ctx, conversationId);
  const target = await waitForAgentServer(deps.ctx, sandboxId, { resume: 'if-spec-allows', timeoutMs: ACCESS_TIMEOUT_MS });
  deps.recordActivity(sandboxId);
  return { target, sandboxId };
}

export const registerAppConversationEventRoutes: AppConversationRouteRegistrar = (app, deps) => {
  app.openapi(search, async (c) => {
    const { id } = c.req.valid('param');
    const { target } = await conversationTarget(deps, id);
    return forwardHttp(c.req.raw, target, `/api/conversations/${id}/events/search`, new URL(c.req.url).search);
  });

  app.openapi(send, async (c) => {
    const { id } = c.req.valid('param');
    const { target } = await conversationTarget(deps, id);
    const body = JSON.stringify(c.req.valid('json'));
    const request = new Request(c.req.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return forwardHttp(request, target, `/api/conversations/${id}/events`, '');
  });

  // The conversation's live events: the agent-server's /sockets/events/{id}, bridged. Query
  // parameters (resend_all, after_event_id) pass through; the session key is added here.
  app.get('/api/v1/app-conversations/:id/events/socket', async (c) => {
    const { id } = parsePath(AppConversationIdParamsSchema, { id: c.req.param('id') });
    requireUpgrade(c.req.header('upgrade'));
    const { target, sandboxId } = await conversationTarget(deps, id);
    const query = new URL(c.req.url).searchParams;
    query.delete(SESSION_KEY_QUERY);
    query.set(SESSION_KEY_QUERY, target.sessionApiKey);
    const upstream = `${target.baseUrl.replace(/^http/, 'ws')}/sockets/events/${id}?${query}`;
    return deps.upgradeWebSocket(c, bridgeWebSocket(upstream, () => deps.recordActivity(sandboxId)));
  });
};
