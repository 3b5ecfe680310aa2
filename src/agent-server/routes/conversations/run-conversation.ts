import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { ConversationContext } from '../../services/context.js';
import { runConversation } from '../../services/conversations/run-conversation.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, jsonContent, SuccessSchema, validationErrorResponse, workspaceUnusableResponse } from '../responses.js';

export const runConversationRoute = createRoute({
  method: 'post',
  path: '/api/conversations/{conversation_id}/run',
  tags: ['Conversations'],
  summary: 'Run the agent until it finishes, pauses, waits for confirmation or fails',
  request: { params: ConversationPathSchema },
  responses: {
    200: jsonContent(SuccessSchema, 'The agent runs in the background; follow its events'),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
    ...workspaceUnusableResponse,
  },
});

export function registerRunConversation(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(runConversationRoute, async (c) => {
    await runConversation(ctx, c.req.valid('param').conversation_id);
    return c.json({ success: true }, 200);
  });
}
