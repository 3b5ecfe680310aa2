import { eq } from 'drizzle-orm';
import { appConversations, sandboxes } from '../../db/schema.js';
import { agentTargetOf } from '../../agent-client.js';
import type { AppConversationContext } from './context.js';
import { findAppConversation } from './find-app-conversation.js';

/**
 * Forgets the conversation and, when its sandbox runs, deletes it on the agent-server too. A
 * sandbox that is paused or gone keeps its copy: deleting never waits on, or fails because of, it.
 */
export async function deleteAppConversation(ctx: AppConversationContext, id: string): Promise<void> {
  const row = await findAppConversation(ctx, id);
  const [sandbox] = await ctx.db.select().from(sandboxes).where(eq(sandboxes.id, row.sandboxId));
  const target = sandbox ? agentTargetOf(sandbox) : null;
  if (target) await ctx.agentClient(target).deleteConversation(id).catch(() => undefined);
  await ctx.db.delete(appConversations).where(eq(appConversations.id, id));
}
