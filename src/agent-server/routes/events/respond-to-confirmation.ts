import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { ConversationContext } from '../../services/context.js';
import { respondToConfirmation } from '../../services/events/respond-to-confirmation.js';
import { requireJsonBody } from '../json-body.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, jsonContent, SuccessSchema, validationErrorResponse, workspaceUnusableResponse } from '../responses.js';

export const ConfirmationResponseRequestSchema = z.object({
  accept: z.boolean(),
  reason: z.string().default('User rejected the action.'),
});

export const respondToConfirmationRoute = createRoute({
  method: 'post',
  path: '/api/conversations/{conversation_id}/events/respond_to_confirmation',
  tags: ['Events'],
  summary: 'Accept or reject the actions waiting for confirmation',
  description:
    'accept runs the waiting actions and the agent carries on; a reject records a UserRejectObservation (rejection_source user) for each of them.',
  middleware: [requireJsonBody] as const,
  request: {
    params: ConversationPathSchema,
    body: { required: true, content: { 'application/json': { schema: ConfirmationResponseRequestSchema } } },
  },
  responses: {
    200: jsonContent(SuccessSchema, 'The answer is taken'),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
    ...workspaceUnusableResponse,
  },
});

export function registerRespondToConfirmation(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(respondToConfirmationRoute, async (c) => {
    await respondToConfirmation(ctx, { conversationId: c.req.valid('param').conversation_id, response: c.req.valid('json') });
    return c.json({ success: true }, 200);
  });
}
