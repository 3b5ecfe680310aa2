import { asc, max } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { lifecycleEvents } from '../db/schema.js';
import type { LifecycleEvent } from '../models/lifecycle-event.js';
import type { EventFeed } from './event-feed.js';
import { afterCondition, type EventFilter, toLifecycleEvent } from './event-view.js';

/** Rows read per query while catching up. */
const BATCH = 100;

/** The id of the newest committed event (0 when there is none): a stream with no cursor starts after it. */
export async function latestEventId(db: Database): Promise<number> {
  const [row] = await db.select({ id: max(lifecycleEvents.id) }).from(lifecycleEvents);
  return row?.id ?? 0;
}

/**
 * Every event matching `filter` with an id above `afterId`, in id order, then each new one as it
 * commits, until `signal` aborts. Ids are in commit order (record-event.ts), so reading "after the
 * last id delivered" never skips an event that commits later, and never repeats one.
 */
export async function* followEvents(options: {
  db: Database;
  feed: EventFeed;
  filter: EventFilter;
  afterId: number;
  signal: AbortSignal;
}): AsyncGenerator<LifecycleEvent> {
  const { db, feed, filter, signal } = options;
  let cursor = options.afterId;
  const stopped = new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  while (!signal.aborted && !feed.closing.aborted) {
    const changed = feed.nextChange();
    const rows = await db
      .select()
      .from(lifecycleEvents)
      .where(afterCondition(filter, cursor))
      .orderBy(asc(lifecycleEvents.id))
      .limit(BATCH);
    for (const row of rows) {
      if (signal.aborted) return;
      cursor = row.id;
      yield toLifecycleEvent(row);
    }
    if (rows.length < BATCH) await Promise.race([changed, stopped]);
  }
}
