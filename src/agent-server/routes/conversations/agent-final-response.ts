import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { ConversationContext } from '../../services/context.js';
import { getAgentFinalResponse } from '../../services/conversations/get-agent-final-response.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, jsonContent, validationErrorResponse } from '../responses.js';

export const AgentResponseResultSchema = z.object({ response: z.string() }).openapi('AgentResponseResult');

export const agentFinalResponseRoute = createRoute({
  method: 'get',
  path: '/api/conversations/{conversation_id}/agent_final_response',
  tags: ['Conversations'],
  summary: "The agent's final answer: its finish message or its last text, '' before it answered",
  request: { params: ConversationPathSchema },
  responses: {
    200: jsonContent(AgentResponseResultSchema, 'The answer'),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
  },
});

export function registerAgentFinalResponse(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(agentFinalResponseRoute, async (c) => {
    const response = await getAgentFinalResponse(ctx, c.req.valid('param').conversation_id);
    return c.json({ response }, 200);
  });
}
