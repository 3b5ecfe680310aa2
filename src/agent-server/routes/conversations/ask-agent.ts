import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { AskAgentRequestSchema } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../../services/context.js';
import { askAgent } from '../../services/conversations/ask-agent.js';
import { requireJsonBody } from '../json-body.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, DetailSchema, jsonContent, validationErrorResponse } from '../responses.js';

const AskAgentResponseSchema = z.object({ response: z.string() }).openapi('AskAgentResponse');

export const askAgentRoute = createRoute({
  method: 'post',
  path: '/api/conversations/{conversation_id}/ask_agent',
  tags: ['Conversations'],
  summary: "Ask the conversation's LLM a side question; nothing is recorded",
  middleware: [requireJsonBody] as const,
  request: {
    params: ConversationPathSchema,
    body: { required: true, content: { 'application/json': { schema: AskAgentRequestSchema.openapi('AskAgentRequest') } } },
  },
  responses: {
    200: jsonContent(AskAgentResponseSchema, "The LLM's answer"),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
    502: jsonContent(DetailSchema, 'The LLM failed or could not be reached'),
  },
});

export function registerAskAgent(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(askAgentRoute, async (c) => {
    const response = await askAgent(ctx, { conversationId: c.req.valid('param').conversation_id, question: c.req.valid('json').question });
    return c.json({ response }, 200);
  });
}
