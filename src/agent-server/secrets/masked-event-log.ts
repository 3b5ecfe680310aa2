import type { EventLog, StoredEvent } from '../store/index.js';

/**
 * The log with every appended event masked first (`mask`), so that a secret is stored nowhere in a
 * conversation's events: what the stream sends, a search or download returns, and the agent loop
 * reads back to build the LLM's view are all the stored, masked text.
 */
export function withMaskedAppends<E extends StoredEvent>(log: EventLog<E>, mask: <T>(value: T) => T): EventLog<E> {
  return {
    get size() {
      return log.size;
    },
    get recovery() {
      return log.recovery;
    },
    append: (events) => log.append(events.map((event) => mask(event))),
    get: (id) => log.get(id),
    positionOf: (id) => log.positionOf(id),
    readRange: (from, to) => log.readRange(from, to),
    readLines: (from, to) => log.readLines(from, to),
    search: (query) => log.search(query),
    count: (filter) => log.count(filter),
    exportLines: () => log.exportLines(),
    onAppend: (listener) => log.onAppend(listener),
    close: () => log.close(),
  };
}
