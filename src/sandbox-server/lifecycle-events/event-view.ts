import { and, eq, gt, inArray, type SQL } from 'drizzle-orm';
import { type LifecycleEventRow, lifecycleEvents } from '../db/schema.js';
import type { LifecycleEvent } from '../models/lifecycle-event.js';
import type { LifecycleEventType } from '../../contracts/lifecycle-event.js';

/** What a reader wants to see; every field narrows. */
export interface EventFilter {
  types?: LifecycleEventType[];
  sandboxId?: string;
}

export function filterConditions(filter: EventFilter): SQL[] {
  const conditions: SQL[] = [];
  if (filter.types && filter.types.length > 0) conditions.push(inArray(lifecycleEvents.type, filter.types));
  if (filter.sandboxId !== undefined) conditions.push(eq(lifecycleEvents.sandboxId, filter.sandboxId));
  return conditions;
}

/** Whether an event passes the filter: the conditions above, in memory. */
export function matchesFilter(filter: EventFilter, event: LifecycleEvent): boolean {
  if (filter.types && filter.types.length > 0 && !filter.types.includes(event.type)) return false;
  return filter.sandboxId === undefined || event.sandbox_id === filter.sandboxId;
}

/** Events after `afterId` that match the filter. */
export function afterCondition(filter: EventFilter, afterId: number): SQL | undefined {
  return and(gt(lifecycleEvents.id, afterId), ...filterConditions(filter));
}

export function toLifecycleEvent(row: LifecycleEventRow): LifecycleEvent {
  return {
    id: String(row.id),
    type: row.type,
    subject_kind: row.subjectKind,
    subject_id: row.subjectId,
    sandbox_id: row.sandboxId,
    previous_status: row.previousStatus,
    status: row.status,
    status_detail: row.statusDetail,
    timestamp: row.createdAt.toISOString(),
  };
}
