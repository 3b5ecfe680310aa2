import { SendMessageRequestSchema } from '../../../contracts/agent-server/conversation-requests.js';
import { invalidValuesFromZod, RequestValidationError } from '../../../errors/index.js';
import type { ConversationContext } from '../context.js';
import { sendMessage } from './send-message.js';

/**
 * A message sent over the WebSocket: validated like the body of POST .../events, and, as in
 * OpenHands, it always asks the agent to run.
 */
export async function sendSocketMessage(ctx: ConversationContext, input: { conversationId: string; message: unknown }): Promise<void> {
  const parsed = SendMessageRequestSchema.safeParse(input.message);
  if (!parsed.success) throw new RequestValidationError(invalidValuesFromZod(parsed.error, 'body'));
  await sendMessage(ctx, { conversationId: input.conversationId, request: { ...parsed.data, run: true } });
}
