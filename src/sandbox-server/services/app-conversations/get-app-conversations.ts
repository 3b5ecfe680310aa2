import { inArray } from 'drizzle-orm';
import { BadRequestError, NotFoundError } from '../../../errors/index.js';
import { appConversations } from '../../db/schema.js';
import type { AppConversation } from '../../models/app-conversation.js';
import { MAX_BATCH_IDS } from '../../models/common.js';
import { toAppConversations } from './app-conversation-view.js';
import type { AppConversationContext } from './context.js';

/** One entry per id, in order: the conversation, or null when there is none. */
export async function getAppConversations(ctx: AppConversationContext, ids: string[]): Promise<(AppConversation | null)[]> {
  if (ids.length > MAX_BATCH_IDS) throw new BadRequestError(`Too many ids: at most ${MAX_BATCH_IDS}`);
  const rows = ids.length === 0 ? [] : await ctx.db.select().from(appConversations).where(inArray(appConversations.id, ids));
  const views = new Map((await toAppConversations(ctx, rows)).map((view) => [view.id, view]));
  return ids.map((id) => views.get(id) ?? null);
}

export async function getAppConversation(ctx: AppConversationContext, id: string): Promise<AppConversation> {
  const [view] = await getAppConversations(ctx, [id]);
  if (!view) throw new NotFoundError('App conversation not found');
  return view;
}
