/**
 * OpenHands' app-server event routes, `/api/v1/conversation/{conversation_id}/events/...`: search
 * (with `kind__eq`), count and a batch get by `id`, beside our `/api/v1/app-conversations/{id}/events`.
 * Each is answered by the agent-server of the conversation's sandbox, its answer passed through;
 * as there, a batch of more than 100 ids is a 400.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { EventSearchQuerySchema } from '../../../contracts/agent-server/event-queries.js';
import { BadRequestError } from '../../../errors/index.js';
import { forwardHttp } from '../../proxy/forward-http.js';
import { errorResponses, MAX_BATCH_IDS } from '../../models/common.js';
import type { AppConversationRouteRegistrar } from './deps.js';
import { AGENT_SERVER_FAILED, conversationTarget, EventPageSchema } from './events.js';

const ParamsSchema = z.object({ conversation_id: z.uuid() });

/** OpenHands names the kind filter `kind__eq` here; the rest is the agent-server's search query. */
const SearchQuerySchema = EventSearchQuerySchema.omit({ kind: true, source: true, body: true }).extend({
  kind__eq: z.string().min(1).optional(),
});
const CountQuerySchema = SearchQuerySchema.omit({ page_id: true, limit: true, sort_order: true });

const BatchQuerySchema = z.object({
  id: z
    .preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(z.string().min(1)).min(1))
    .openapi({ type: 'array', items: { type: 'string' }, description: `Event ids (at most ${MAX_BATCH_IDS})` }),
});

/** Search and count differ only in their last path segment, summary, query and answer. */
function filterRoute<Q extends z.ZodObject>(action: 'search' | 'count', query: Q, ok: { description: string; schema: z.ZodType }) {
  return createRoute({
    method: 'get',
    path: `/api/v1/conversation/{conversation_id}/events/${action}`,
    tags: ['Events'],
    summary: `${action === 'search' ? 'Search' : 'Count'} the conversation's events (OpenHands' app-server route)`,
    request: { params: ParamsSchema, query },
    responses: {
      200: { description: ok.description, content: { 'application/json': { schema: ok.schema } } },
      ...errorResponses(401, 404, 409),
      502: AGENT_SERVER_FAILED,
    },
  });
}

const search = filterRoute('search', SearchQuerySchema, { description: 'A page of events', schema: EventPageSchema });
const count = filterRoute('count', CountQuerySchema, { description: 'How many match', schema: z.int() });

const batchGet = createRoute({
  method: 'get',
  path: '/api/v1/conversation/{conversation_id}/events',
  tags: ['Events'],
  summary: "Get the conversation's events by id, null for each unknown one (OpenHands' app-server route)",
  request: { params: ParamsSchema, query: BatchQuerySchema },
  responses: {
    200: {
      description: 'One entry per id, in order',
      content: { 'application/json': { schema: z.array(z.record(z.string(), z.unknown()).nullable()) } },
    },
    ...errorResponses(400, 401, 404, 409),
    502: AGENT_SERVER_FAILED,
  },
});

/** The agent-server's query for these filters: `kind__eq` becomes `kind`, the rest keeps its name. */
function agentServerQuery(query: Record<string, string | number | string[] | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) params.append(name === 'kind__eq' ? 'kind' : name, String(one));
  }
  return params.size > 0 ? `?${params}` : '';
}

export const registerPeerEventRoutes: AppConversationRouteRegistrar = (app, deps) => {
  for (const [route, action] of [[search, 'search'], [count, 'count']] as const) {
    app.openapi(route, async (c) => {
      const { conversation_id: id } = c.req.valid('param');
      const { target } = await conversationTarget(deps, id);
      return forwardHttp(c.req.raw, target, `/api/conversations/${id}/events/${action}`, agentServerQuery(c.req.valid('query')));
    });
  }

  app.openapi(batchGet, async (c) => {
    const { conversation_id: id } = c.req.valid('param');
    const ids = c.req.valid('query').id;
    if (ids.length > MAX_BATCH_IDS) throw new BadRequestError(`Cannot request more than ${MAX_BATCH_IDS} events at once, got ${ids.length}`);
    const { target } = await conversationTarget(deps, id);
    return forwardHttp(c.req.raw, target, `/api/conversations/${id}/events`, agentServerQuery({ event_ids: ids }));
  });
};
