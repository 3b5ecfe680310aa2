import { sql } from 'drizzle-orm';
import { type LifecycleEventRow, lifecycleEvents, webhookDeliveries, webhooks } from '../db/schema.js';
import { toLifecycleEvent } from './event-view.js';
import type { Transaction } from '../db/client.js';
import type { LifecycleEventType, SubjectKind } from '../../contracts/lifecycle-event.js';

/** The channel every committed event is announced on, to this process and to every other replica. */
export const LIFECYCLE_EVENTS_CHANNEL = 'sandbox_server_lifecycle_events';

/**
 * Key of the transaction-level advisory lock that puts event ids in commit order. A plain sequence
 * does not: on PostgreSQL, transaction A may take id 5, transaction B id 6, and B commit first; a
 * reader that has seen 6 resumes "after 6" and never sees 5. Holding this lock from taking the id
 * until commit means the next id is only taken once the previous event is visible. The cost is that
 * event-writing transactions commit one at a time from that point, which is why the event is the
 * last write of its transaction. PGlite has a single writer, so there the lock costs nothing.
 */
const EVENT_ORDER_LOCK = 7_465_011_298;

export interface NewLifecycleEvent {
  type: LifecycleEventType;
  subjectKind: SubjectKind;
  subjectId: string;
  sandboxId: string | null;
  previousStatus: string | null;
  status: string | null;
  statusDetail: string | null;
}

/**
 * Appends an event inside the transaction that made the change it describes, with its webhook
 * deliveries, so the change, its event and its deliveries commit together or not at all. Call it as the transaction's last write (see the lock above).
 * The notification is delivered by the database only when the transaction commits.
 */
export async function recordEvent(tx: Transaction, event: NewLifecycleEvent): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${EVENT_ORDER_LOCK})`);
  const [row] = await tx.insert(lifecycleEvents).values(event).returning();
  if (!row) throw new Error('insert returned no row');
  await enqueueDeliveries(tx, row);
  await tx.execute(sql`select pg_notify(${LIFECYCLE_EVENTS_CHANNEL}, '')`);
}

/** The webhook outbox rows of an event: one per enabled webhook that wants its type. */
async function enqueueDeliveries(tx: Transaction, row: LifecycleEventRow): Promise<void> {
  const body = JSON.stringify(toLifecycleEvent(row));
  await tx.execute(sql`
    insert into ${webhookDeliveries} (webhook_id, event_id, event_type, ordering_key, body)
    select ${webhooks.id}, ${row.id}, ${row.type}, ${row.sandboxId ?? row.subjectId}, ${body}
    from ${webhooks}
    where ${webhooks.enabled} and (${webhooks.eventTypes} = '[]'::jsonb or ${webhooks.eventTypes} ? ${row.type})`);
}
