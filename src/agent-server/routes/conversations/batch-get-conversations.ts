import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { BadRequestError } from '../../../errors/index.js';
import { ConversationInfoSchema } from '../../../contracts/agent-server/conversation-info.js';
import { BatchGetConversationsQuerySchema } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../../services/context.js';
import { batchGetConversations } from '../../services/conversations/batch-get-conversations.js';
import { DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';

/** As in OpenHands: a batch get of more conversations than this is refused. */
export const MAX_BATCH = 100;

export const batchGetConversationsRoute = createRoute({
  method: 'get',
  path: '/api/conversations',
  tags: ['Conversations'],
  summary: 'Get several conversations by id',
  request: { query: BatchGetConversationsQuerySchema },
  responses: {
    200: jsonContent(z.array(ConversationInfoSchema.nullable()), 'One entry per id, in order; null for an unknown id'),
    400: jsonContent(DetailSchema, `More than ${MAX_BATCH} ids`),
    ...validationErrorResponse,
  },
});

export function registerBatchGetConversations(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(batchGetConversationsRoute, (c) => {
    const { ids } = c.req.valid('query');
    if (ids.length > MAX_BATCH) throw new BadRequestError(`Too many ids: at most ${MAX_BATCH} per request`);
    return c.json(batchGetConversations(ctx, ids), 200);
  });
}
