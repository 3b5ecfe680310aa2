import type { ConversationExecutionStatus } from '../../../contracts/agent-server/conversation-requests.js';
import type { ConversationContext } from '../context.js';

export function countConversations(ctx: ConversationContext, status?: ConversationExecutionStatus): number {
  return ctx.conversations.all().filter((m) => status === undefined || m.execution_status === status).length;
}
