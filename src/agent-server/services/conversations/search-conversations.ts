import type { ConversationInfo } from '../../../contracts/agent-server/conversation-info.js';
import type { Page } from '../../../contracts/paging.js';
import type { ConversationExecutionStatus, ConversationSortOrder } from '../../../contracts/agent-server/conversation-requests.js';
import { validationError } from '../../../errors/index.js';
import { timestampMillis } from '../../../events/timestamp.js';
import type { ConversationMetadata } from '../../conversations/metadata.js';
import { toConversationInfo } from './conversation-info.js';
import type { ConversationContext } from '../context.js';

export function searchConversations(ctx: ConversationContext, query: ConversationPageQuery): Page<ConversationInfo> {
  const page = pageConversations(ctx.conversations.all(), query);
  return { items: page.items.map(toConversationInfo), next_page_id: page.next_page_id };
}

export interface ConversationPageQuery {
  status?: ConversationExecutionStatus;
  sortOrder: ConversationSortOrder;
  pageId?: string;
  limit: number;
}

interface Key {
  millis: number;
  id: string;
}

/**
 * One page of conversations, filtered and sorted by (time, id). `next_page_id` encodes the key of
 * the first conversation of the next page rather than its position, so paging stays exact when
 * conversations are created or deleted between requests.
 */
function pageConversations(
  conversations: readonly ConversationMetadata[],
  query: ConversationPageQuery,
): Page<ConversationMetadata> {
  const field = query.sortOrder.startsWith('CREATED_AT') ? 'created_at' : 'updated_at';
  const direction = query.sortOrder.endsWith('_DESC') ? -1 : 1;
  const keyOf = (c: ConversationMetadata): Key => ({ millis: timestampMillis(c[field]), id: c.id });
  const sorted = conversations
    .filter((c) => query.status === undefined || c.execution_status === query.status)
    .map((c) => ({ conversation: c, key: keyOf(c) }))
    .sort((a, b) => direction * compareKeys(a.key, b.key));
  const cursor = query.pageId === undefined ? undefined : decodeCursor(query.pageId);
  const start = cursor === undefined ? 0 : sorted.findIndex((entry) => direction * compareKeys(entry.key, cursor) >= 0);
  if (start === -1) return { items: [], next_page_id: null };
  const items = sorted.slice(start, start + query.limit);
  const next = sorted[start + query.limit];
  return { items: items.map((entry) => entry.conversation), next_page_id: next ? encodeCursor(next.key) : null };
}

function compareKeys(a: Key, b: Key): number {
  return a.millis - b.millis || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function encodeCursor(key: Key): string {
  return Buffer.from(`${key.millis}:${key.id}`).toString('base64url');
}

function decodeCursor(pageId: string): Key {
  const match = /^(-?\d+):(.+)$/.exec(Buffer.from(pageId, 'base64url').toString());
  if (!match) throw validationError('query', ['page_id'], 'Invalid page_id');
  return { millis: Number(match[1]), id: match[2]! };
}
