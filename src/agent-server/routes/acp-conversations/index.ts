/**
 * OpenHands' "ACP-capable" conversation routes, /api/acp/conversations: the same conversations as
 * /api/conversations under a contract whose agent may also be an ACPAgent (an external agent CLI).
 * No ACPAgent runs here, so every conversation is an ordinary one and these routes answer exactly as
 * their /api/conversations counterparts; starting an ACPAgent is a 422.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { BadRequestError } from '../../../errors/index.js';
import { ConversationInfoSchema, ConversationPageSchema } from '../../../contracts/agent-server/conversation-info.js';
import {
  BatchGetConversationsQuerySchema,
  ConversationCountQuerySchema,
  ConversationSearchQuerySchema,
  StartConversationRequestSchema,
} from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../../services/context.js';
import { batchGetConversations } from '../../services/conversations/batch-get-conversations.js';
import { countConversations } from '../../services/conversations/count-conversations.js';
import { getConversation } from '../../services/conversations/get-conversation.js';
import { searchConversations } from '../../services/conversations/search-conversations.js';
import { startConversation } from '../../services/conversations/start-conversation.js';
import { MAX_BATCH } from '../conversations/batch-get-conversations.js';
import { requireJsonBody } from '../json-body.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';

const BASE = '/api/acp/conversations';
const TAGS = ['ACP Conversations'];

const startRoute = createRoute({
  method: 'post',
  path: BASE,
  tags: TAGS,
  summary: 'Start a conversation (an ACPAgent is a 422: none runs here)',
  middleware: [requireJsonBody] as const,
  request: { body: { required: true, content: { 'application/json': { schema: StartConversationRequestSchema } } } },
  responses: {
    201: jsonContent(ConversationInfoSchema, 'The conversation was created'),
    200: jsonContent(ConversationInfoSchema, 'A conversation with that conversation_id already exists; it is unchanged'),
    ...validationErrorResponse,
  },
});

const searchRoute = createRoute({
  method: 'get',
  path: `${BASE}/search`,
  tags: TAGS,
  summary: 'Search conversations',
  request: { query: ConversationSearchQuerySchema },
  responses: { 200: jsonContent(ConversationPageSchema, 'A page of conversations'), ...validationErrorResponse },
});

const countRoute = createRoute({
  method: 'get',
  path: `${BASE}/count`,
  tags: TAGS,
  summary: 'Count conversations',
  request: { query: ConversationCountQuerySchema },
  responses: { 200: jsonContent(z.int(), 'The number of conversations with that status (all when no status is given)'), ...validationErrorResponse },
});

const batchGetRoute = createRoute({
  method: 'get',
  path: BASE,
  tags: TAGS,
  summary: 'Get several conversations by id',
  request: { query: BatchGetConversationsQuerySchema },
  responses: {
    200: jsonContent(z.array(ConversationInfoSchema.nullable()), 'One entry per id, in order; null for an unknown id'),
    400: jsonContent(DetailSchema, `More than ${MAX_BATCH} ids`),
    ...validationErrorResponse,
  },
});

const getRoute = createRoute({
  method: 'get',
  path: `${BASE}/{conversation_id}`,
  tags: TAGS,
  summary: 'Get a conversation',
  request: { params: ConversationPathSchema },
  responses: { 200: jsonContent(ConversationInfoSchema, 'The conversation'), ...conversationNotFoundResponse, ...validationErrorResponse },
});

export function registerAcpConversationRoutes(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(startRoute, async (c) => {
    const { info, created } = await startConversation(ctx, c.req.valid('json'));
    return created ? c.json(info, 201) : c.json(info, 200);
  });
  app.openapi(batchGetRoute, (c) => {
    const { ids } = c.req.valid('query');
    if (ids.length > MAX_BATCH) throw new BadRequestError(`Too many ids: at most ${MAX_BATCH} per request`);
    return c.json(batchGetConversations(ctx, ids), 200);
  });
  // Before /{conversation_id}, which would otherwise take "search" and "count" for ids.
  app.openapi(searchRoute, (c) => {
    const query = c.req.valid('query');
    const page = searchConversations(ctx, { status: query.status, sortOrder: query.sort_order, pageId: query.page_id, limit: query.limit });
    return c.json(page, 200);
  });
  app.openapi(countRoute, (c) => c.json(countConversations(ctx, c.req.valid('query').status), 200));
  app.openapi(getRoute, (c) => c.json(getConversation(ctx, c.req.valid('param').conversation_id), 200));
}
