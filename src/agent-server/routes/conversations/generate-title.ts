import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { GenerateTitleRequestSchema } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../../services/context.js';
import { generateConversationTitle } from '../../services/conversations/generate-conversation-title.js';
import { requireJsonBody } from '../json-body.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';

const GenerateTitleResponseSchema = z.object({ title: z.string() }).openapi('GenerateTitleResponse');

export const generateTitleRoute = createRoute({
  method: 'post',
  path: '/api/conversations/{conversation_id}/generate_title',
  tags: ['Conversations'],
  summary: 'Suggest a title from the first user message, by the LLM (the message itself, clipped, when the LLM fails)',
  description: 'The title is returned, not stored: set it with PATCH.',
  middleware: [requireJsonBody] as const,
  request: {
    params: ConversationPathSchema,
    body: { required: true, content: { 'application/json': { schema: GenerateTitleRequestSchema.openapi('GenerateTitleRequest') } } },
  },
  responses: {
    200: jsonContent(GenerateTitleResponseSchema, 'The title, at most max_length characters'),
    ...conversationNotFoundResponse,
    409: jsonContent(DetailSchema, 'The conversation has no user message yet'),
    ...validationErrorResponse,
  },
});

export function registerGenerateTitle(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(generateTitleRoute, async (c) => {
    const title = await generateConversationTitle(ctx, { conversationId: c.req.valid('param').conversation_id, request: c.req.valid('json') });
    return c.json({ title }, 200);
  });
}
