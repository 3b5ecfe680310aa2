import { inArray } from 'drizzle-orm';
import { BadRequestError } from '../../../errors/index.js';
import { appConversationStartTasks } from '../../db/schema.js';
import type { AppConversationStartTask } from '../../models/app-conversation.js';
import { MAX_BATCH_IDS } from '../../models/common.js';
import { toStartTask } from './app-conversation-view.js';
import type { AppConversationContext } from './context.js';

export async function getStartTasks(ctx: AppConversationContext, ids: string[]): Promise<(AppConversationStartTask | null)[]> {
  if (ids.length > MAX_BATCH_IDS) throw new BadRequestError(`Too many ids: at most ${MAX_BATCH_IDS}`);
  const rows = ids.length === 0 ? [] : await ctx.db.select().from(appConversationStartTasks).where(inArray(appConversationStartTasks.id, ids));
  const byId = new Map(rows.map((row) => [row.id, toStartTask(row)]));
  return ids.map((id) => byId.get(id) ?? null);
}
