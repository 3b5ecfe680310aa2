/**
 * The contract of one conversation's durable event log. Implemented in this folder; used by the
 * conversation verbs, the HTTP routes and the WebSocket stream.
 *
 * Invariants:
 * - Positions are 0..size-1 in append order, with no gaps; an event never moves.
 * - `append` resolves only once every event of the batch is durable (written and fsynced).
 *   Concurrent appends are grouped into one write + fsync. A batch is all-or-nothing.
 * - Event ids are unique within the log; a batch holding a known id is refused whole.
 * - TIMESTAMP order is (timestamp, position): stable under concurrent appends, and exact even when
 *   an import appends events older than those already stored.
 */
import type { EventSortOrder } from '../../contracts/event-sort-order.js';

/** The envelope every stored event has; the full event model lives in src/events. */
export interface StoredEvent {
  id: string;
  kind: string;
  source: string;
  timestamp: string;
  [field: string]: unknown;
}

export type { EventSortOrder };

export interface EventFilter {
  kind?: string;
  source?: string;
  /** Case-insensitive substring of the event's searchable text; events without text never match. */
  body?: string;
  /** Epoch milliseconds, inclusive. */
  timestampGte?: number;
  /** Epoch milliseconds, exclusive. */
  timestampLt?: number;
}

export interface EventQuery extends EventFilter {
  sortOrder: EventSortOrder;
  /** The `nextPageId` of a previous page with the same filters and order. */
  pageId?: string;
  limit: number;
}

export interface EventLogPage<E extends StoredEvent = StoredEvent> {
  items: E[];
  nextPageId: string | null;
}

export interface EventLog<E extends StoredEvent = StoredEvent> {
  /** Number of events; also the position the next appended event will take. */
  readonly size: number;
  /** How the index was rebuilt at open: log bytes taken from a checkpoint, and bytes replayed. */
  readonly recovery: { checkpointedBytes: number; replayedBytes: number };
  append(events: readonly E[]): Promise<void>;
  get(id: string): Promise<E | undefined>;
  positionOf(id: string): number | undefined;
  /** Events at positions [from, to) in append order. */
  readRange(from: number, to: number): Promise<E[]>;
  /** The stored records at positions [from, to), each as its JSON text (no newline), read in one go. */
  readLines(from: number, to: number): Promise<string[]>;
  search(query: EventQuery): Promise<EventLogPage<E>>;
  count(filter: EventFilter): number;
  /** Every stored record as one NDJSON line (with its newline), in append order. */
  exportLines(): AsyncIterable<string>;
  /** Called after each durable batch with the new size. Returns an unsubscribe function. */
  onAppend(listener: (size: number) => void): () => void;
  close(): Promise<void>;
}
