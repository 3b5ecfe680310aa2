import { asc } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { lifecycleEvents } from '../db/schema.js';
import type { LifecycleEvent } from '../models/lifecycle-event.js';
import type { EventFeed } from './event-feed.js';
import type { EventTail } from './event-tail.js';
import { afterCondition, type EventFilter, matchesFilter, toLifecycleEvent } from './event-view.js';

/** Rows read per query while catching up. */
const BATCH = 100;

/**
 * Every event matching `filter` with an id above `afterId`, in id order, then each new one as it
 * commits, until `signal` aborts. Behind, the follower reads the database itself; caught up, it
 * takes new events from the process's one tail (no query of its own per commit). Ids are in commit
 * order (record-event.ts), so reading "after the last id delivered" never skips an event that
 * commits later, and never repeats one.
 */
export async function* followEvents(options: {
  db: Database;
  feed: EventFeed;
  tail: EventTail;
  filter: EventFilter;
  afterId: number;
  signal: AbortSignal;
}): AsyncGenerator<LifecycleEvent> {
  const { db, feed, tail, filter, signal } = options;
  let cursor = options.afterId;
  const stopped = new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  const leave = tail.join();
  try {
    while (!signal.aborted && !feed.closing.aborted) {
      const advanced = tail.next();
      const held = tail.since(cursor);
      if (held !== undefined) {
        for (const { id, event } of held) {
          if (signal.aborted) return;
          cursor = id;
          if (matchesFilter(filter, event)) yield event;
        }
        if (held.length === 0) await Promise.race([advanced, stopped]);
        continue;
      }
      const covered = tail.covered();
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
      if (rows.length === BATCH) continue;
      // Read after the tail had read up to `covered`: every event up to it is delivered or unwanted.
      if (covered !== undefined) cursor = Math.max(cursor, covered);
      else await Promise.race([advanced, stopped]);
    }
  } finally {
    leave();
  }
}
