import { asc, gt, max } from 'drizzle-orm';
import type { Logger } from '../../logger.js';
import type { Database } from '../db/client.js';
import { lifecycleEvents } from '../db/schema.js';
import type { LifecycleEvent } from '../models/lifecycle-event.js';
import type { EventFeed } from './event-feed.js';
import { toLifecycleEvent } from './event-view.js';
import { signal } from './signal.js';

/** Rows read per query. */
const BATCH = 500;
/** Recent events kept for followers that are behind; one further behind reads the database itself. */
const KEPT = 2_000;
/** After a failed read, the next try. */
const RETRY_MS = 1_000;

/** The id of the newest committed event (0 when there is none): a stream with no cursor starts after it. */
export async function latestEventId(db: Database): Promise<number> {
  const [row] = await db.select({ id: max(lifecycleEvents.id) }).from(lifecycleEvents);
  return row?.id ?? 0;
}

/** An event as followers get it: its id as a number (the cursor), and its wire form. */
export interface TailEvent {
  id: number;
  event: LifecycleEvent;
}

/**
 * The process's one reader of newly committed events, fanned out to every follower: a commit
 * costs one query however many streams follow it (each follower used to query after every
 * commit). It reads only while someone follows. Ids are in commit order (record-event.ts), so
 * reading "after the last id read" never skips an event that commits later.
 */
export class EventTail {
  readonly #db: Database;
  readonly #feed: EventFeed;
  readonly #log: Logger;
  /** In id order: every event with an id above `#from` and up to `#last`, while `#ready`. */
  #events: TailEvent[] = [];
  #from = 0;
  #last = 0;
  #ready = false;
  #followers = 0;
  #running = false;
  #advanced = signal();

  constructor(db: Database, feed: EventFeed, log: Logger) {
    this.#db = db;
    this.#feed = feed;
    this.#log = log;
  }

  /** A follower arrives; the returned function is its leaving. The tail reads while anyone follows. */
  join(): () => void {
    this.#followers += 1;
    if (!this.#running) {
      this.#running = true;
      void this.#run();
    }
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#followers -= 1;
      // Nobody to keep events for: the next follower starts from a fresh read.
      if (this.#followers === 0) {
        this.#ready = false;
        this.#events = [];
      }
    };
  }

  /**
   * Every event after `cursor`, when the tail holds them all; undefined when it does not (not
   * read yet, or the follower is further behind than it keeps): the follower reads the database.
   */
  since(cursor: number): readonly TailEvent[] | undefined {
    if (!this.#ready || cursor < this.#from) return undefined;
    const first = this.#events.findIndex((entry) => entry.id > cursor);
    return first < 0 ? [] : this.#events.slice(first);
  }

  /**
   * The id up to which every committed event has been read, or undefined before the first read: a
   * follower that has read the database after taking it has seen every event up to it.
   */
  covered(): number | undefined {
    return this.#ready ? this.#last : undefined;
  }

  /** Settles after the tail's next read (or when the feed closes). Take it before looking. */
  next(): Promise<void> {
    return this.#advanced.promise;
  }

  async #run(): Promise<void> {
    while (this.#followers > 0 && !this.#feed.closing.aborted) {
      const changed = this.#feed.nextChange();
      let retry: Promise<void> | undefined;
      try {
        await this.#read();
      } catch (err) {
        this.#log.warn({ err }, 'lifecycle events could not be read for their followers');
        retry = new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
      }
      this.#wake();
      await (retry ?? changed);
    }
    this.#running = false;
    this.#ready = false;
    this.#events = [];
    this.#wake();
  }

  async #read(): Promise<void> {
    if (!this.#ready) {
      this.#last = await latestEventId(this.#db);
      this.#from = this.#last;
      this.#events = [];
      this.#ready = true;
    }
    for (;;) {
      const rows = await this.#db.select().from(lifecycleEvents).where(gt(lifecycleEvents.id, this.#last)).orderBy(asc(lifecycleEvents.id)).limit(BATCH);
      for (const row of rows) this.#events.push({ id: row.id, event: toLifecycleEvent(row) });
      this.#last = rows.at(-1)?.id ?? this.#last;
      if (this.#events.length > KEPT) {
        const dropped = this.#events.splice(0, this.#events.length - KEPT);
        this.#from = dropped.at(-1)?.id ?? this.#from;
      }
      if (rows.length < BATCH) return;
    }
  }

  #wake(): void {
    const current = this.#advanced;
    this.#advanced = signal();
    current.resolve();
  }
}
