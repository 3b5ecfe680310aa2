import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { SendMessageRequestSchema } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../../services/context.js';
import { sendMessage } from '../../services/events/send-message.js';
import { requireJsonBody } from '../json-body.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, jsonContent, SuccessSchema, validationErrorResponse, workspaceUnusableResponse } from '../responses.js';

export const sendMessageRoute = createRoute({
  method: 'post',
  path: '/api/conversations/{conversation_id}/events',
  tags: ['Events'],
  summary: 'Send a message',
  description:
    'Appends a MessageEvent. Its source follows the role: user → user, assistant → agent, system and tool → environment. With `run: true` the agent is also asked to run.',
  middleware: [requireJsonBody] as const,
  request: {
    params: ConversationPathSchema,
    body: { required: true, content: { 'application/json': { schema: SendMessageRequestSchema } } },
  },
  responses: {
    200: jsonContent(SuccessSchema, 'The message is stored'),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
    ...workspaceUnusableResponse,
  },
});

export function registerSendMessage(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(sendMessageRoute, async (c) => {
    await sendMessage(ctx, { conversationId: c.req.valid('param').conversation_id, request: c.req.valid('json') });
    return c.json({ success: true }, 200);
  });
}
