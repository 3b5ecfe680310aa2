import { and, asc, desc, gte, lt, lte } from 'drizzle-orm';
import type { Page } from '../../../contracts/paging.js';
import { lifecycleEvents } from '../../db/schema.js';
import { type EventFilter, filterConditions, toLifecycleEvent } from '../../lifecycle-events/event-view.js';
import type { LifecycleEvent } from '../../models/lifecycle-event.js';
import type { ServiceContext } from '../context.js';

export interface SearchLifecycleEventsInput extends EventFilter {
  timestampGte?: Date;
  timestampLt?: Date;
  pageId?: number;
  limit: number;
  descending: boolean;
}

/**
 * Events in id order (oldest first, or newest first). The id is itself the sort key, so unlike the
 * other searches' keyset (keyset-page.ts) the cursor needs no lookup of the page_id row: it stays
 * valid after retention has removed that row, and the page starts where that row would have been.
 */
export async function searchLifecycleEvents(ctx: ServiceContext, input: SearchLifecycleEventsInput): Promise<Page<LifecycleEvent>> {
  const conditions = filterConditions(input);
  if (input.timestampGte) conditions.push(gte(lifecycleEvents.createdAt, input.timestampGte));
  if (input.timestampLt) conditions.push(lt(lifecycleEvents.createdAt, input.timestampLt));
  if (input.pageId !== undefined) {
    conditions.push(input.descending ? lte(lifecycleEvents.id, input.pageId) : gte(lifecycleEvents.id, input.pageId));
  }
  const rows = await ctx.db
    .select()
    .from(lifecycleEvents)
    .where(and(...conditions))
    .orderBy(input.descending ? desc(lifecycleEvents.id) : asc(lifecycleEvents.id))
    .limit(input.limit + 1);
  const next = rows.length > input.limit ? rows[input.limit] : undefined;
  return { items: rows.slice(0, input.limit).map(toLifecycleEvent), next_page_id: next ? String(next.id) : null };
}
