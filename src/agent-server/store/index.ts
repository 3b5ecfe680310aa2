export type { EventFilter, EventLog, EventLogPage, EventQuery, EventSortOrder, StoredEvent } from './event-log.js';
export { openEventLog, type EventLogOptions } from './file-event-log.js';
export {
  CorruptEventLogError,
  DuplicateEventIdError,
  EventLogUnavailableError,
  UnknownPageIdError,
  type DuplicateEventId,
} from './errors.js';
