import { randomUUID } from 'node:crypto';
import type { ConversationInfo } from '../../../contracts/agent-server/conversation-info.js';
import type { ForkConversationRequest } from '../../../contracts/agent-server/conversation-requests.js';
import { ConflictError } from '../../../errors/index.js';
import { nowTimestamp } from '../../../events/index.js';
import { toConversationInfo } from './conversation-info.js';
import type { ConversationContext } from '../context.js';
import { deleteConversation } from './delete-conversation.js';

/** Events copied per batch, so a long history is never all in memory. */
const FORK_BATCH = 1000;

/**
 * A new conversation with the settings and a copy of the whole history of `id`, idle, under a new
 * (or the requested) id; running it carries on from the copied history.
 */
export async function forkConversation(ctx: ConversationContext, input: { conversationId: string; request: ForkConversationRequest }): Promise<ConversationInfo> {
  const { request } = input;
  const source = ctx.conversations.require(input.conversationId);
  const forkId = request.id ?? randomUUID();
  if (ctx.conversations.get(forkId)) throw new ConflictError(`Conversation ${forkId} already exists`);
  const sourceLog = await ctx.conversations.openLog(source);
  const end = sourceLog.size;
  const now = nowTimestamp();
  const fork = ctx.conversations.create({
    ...source.metadata,
    id: forkId,
    title: request.title ?? source.metadata.title,
    tags: request.tags ?? source.metadata.tags,
    execution_status: 'idle',
    created_at: now,
    updated_at: now,
  });
  try {
    await fork.created;
    for (let from = 0; from < end; from += FORK_BATCH) {
      await ctx.conversations.appendEvents(fork, await sourceLog.readRange(from, Math.min(end, from + FORK_BATCH)));
    }
  } catch (error) {
    await deleteConversation(ctx, forkId).catch(() => undefined);
    throw error;
  }
  return toConversationInfo(fork.metadata);
}
