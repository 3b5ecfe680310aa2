import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { ConfirmationPolicySchema } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../../services/context.js';
import { setConfirmationPolicy } from '../../services/conversations/set-confirmation-policy.js';
import { requireJsonBody } from '../json-body.js';
import { ConversationPathSchema } from '../params.js';
import { conversationNotFoundResponse, jsonContent, SuccessSchema, validationErrorResponse, workspaceUnusableResponse } from '../responses.js';

export const SetConfirmationPolicyRequestSchema = z.object({ policy: ConfirmationPolicySchema });

export const setConfirmationPolicyRoute = createRoute({
  method: 'post',
  path: '/api/conversations/{conversation_id}/confirmation_policy',
  tags: ['Conversations'],
  summary: 'Change when actions wait for confirmation',
  description: 'NeverConfirm, AlwaysConfirm, or ConfirmRisky (actions at or above `threshold` wait). Takes effect from the next LLM answer.',
  middleware: [requireJsonBody] as const,
  request: {
    params: ConversationPathSchema,
    body: { required: true, content: { 'application/json': { schema: SetConfirmationPolicyRequestSchema } } },
  },
  responses: {
    200: jsonContent(SuccessSchema, 'The policy is set'),
    ...conversationNotFoundResponse,
    ...validationErrorResponse,
    ...workspaceUnusableResponse,
  },
});

export function registerSetConfirmationPolicy(app: OpenAPIHono, ctx: ConversationContext): void {
  app.openapi(setConfirmationPolicyRoute, async (c) => {
    await setConfirmationPolicy(ctx, { conversationId: c.req.valid('param').conversation_id, policy: c.req.valid('json').policy });
    return c.json({ success: true }, 200);
  });
}
