import type { Listen } from '../db/client.js';
import { LIFECYCLE_EVENTS_CHANNEL } from './record-event.js';
import { signal } from './signal.js';

/**
 * Tells readers that events were committed, by any process sharing the database (a NOTIFY sent by
 * the committing transaction). It carries no events: readers query after their own cursor, so a
 * notification that arrives twice, or late, costs a query and never a duplicate.
 */
export class EventFeed {
  readonly #closing = new AbortController();
  #next = signal();
  #unlisten: (() => Promise<void>) | undefined;

  /**
   * Starts listening (until then nothing wakes readers). Every (re)connection of the listener also
   * wakes them, in case a notification was lost while it was away.
   */
  async listen(listen: Listen): Promise<void> {
    this.#unlisten = await listen(LIFECYCLE_EVENTS_CHANNEL, () => this.#wake());
  }

  /**
   * Settles at the next commit of an event, or at close. Take it before reading: a commit between
   * the read and the wait then still wakes the reader.
   */
  nextChange(): Promise<void> {
    return this.#next.promise;
  }

  /** Aborted when the feed closes: streams end so that shutdown does not wait for them. */
  get closing(): AbortSignal {
    return this.#closing.signal;
  }

  /** Ends the streams reading the feed, and wakes every reader, so that shutdown does not wait for them. */
  endStreams(): void {
    this.#closing.abort();
    this.#wake();
  }

  async close(): Promise<void> {
    this.endStreams();
    await this.#unlisten?.();
  }

  #wake(): void {
    const current = this.#next;
    this.#next = signal();
    current.resolve();
  }
}
