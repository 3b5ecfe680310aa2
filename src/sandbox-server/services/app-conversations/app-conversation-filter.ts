import { gte, ilike, lt, type SQL } from 'drizzle-orm';
import { appConversations } from '../../db/schema.js';
import type { AppConversationFilter } from '../../models/app-conversation.js';

/** The WHERE conditions of a search or count filter. */
export function filterConditions(filter: AppConversationFilter): SQL[] {
  const conditions: SQL[] = [];
  if (filter.title__contains) conditions.push(ilike(appConversations.title, `%${escapeLike(filter.title__contains)}%`));
  if (filter.created_at__gte) conditions.push(gte(appConversations.createdAt, new Date(filter.created_at__gte)));
  if (filter.created_at__lt) conditions.push(lt(appConversations.createdAt, new Date(filter.created_at__lt)));
  if (filter.updated_at__gte) conditions.push(gte(appConversations.updatedAt, new Date(filter.updated_at__gte)));
  if (filter.updated_at__lt) conditions.push(lt(appConversations.updatedAt, new Date(filter.updated_at__lt)));
  return conditions;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
