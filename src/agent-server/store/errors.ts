import { DomainError } from '../../errors/index.js';

export interface DuplicateEventId {
  /** Index of the event in the refused batch. */
  index: number;
  id: string;
  /** `stored`: the log (or a batch still being written) holds it; `repeated`: an earlier event of the batch does. */
  reason: 'stored' | 'repeated';
}

/**
 * A batch holding an id the log already has, or the same id twice; nothing of it was written. The
 * batch is what a caller sent as the body, so each duplicate is the `id` of the body's record at its index.
 */
export class DuplicateEventIdError extends DomainError {
  constructor(readonly duplicates: DuplicateEventId[]) {
    super(
      'invalid',
      `Duplicate event ids: ${duplicates.map(({ id }) => id).join(', ')}`,
      duplicates.map(({ index, id, reason }) => ({
        in: 'body',
        field: [index, 'id'],
        msg: reason === 'stored' ? `Event id ${id} already exists` : `Event id ${id} is repeated in the batch`,
        type: 'value_error',
      })),
    );
  }
}

/** A search's `page_id` (a query parameter of every search) that names no stored event. */
export class UnknownPageIdError extends DomainError {
  constructor(readonly pageId: string) {
    super('invalid', `Unknown page_id ${pageId}`, [{ in: 'query', field: ['page_id'], msg: 'Unknown page_id', type: 'value_error' }]);
  }
}

/**
 * The log file holds an unreadable record before readable ones, or one id twice. Only the tail can
 * be torn by a crash, so this is damage from outside; we refuse to guess which events to drop.
 */
export class CorruptEventLogError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
    reason: string,
  ) {
    super(`Event log ${file} is corrupt at byte ${offset}: ${reason}`);
    this.name = 'CorruptEventLogError';
  }
}

/** Appends to a closed log, or to one whose last write failed (its disk state is unknown until reopened). */
export class EventLogUnavailableError extends Error {
  constructor(file: string, reason: string, options?: { cause?: unknown }) {
    super(`Event log ${file} ${reason}`, options);
    this.name = 'EventLogUnavailableError';
  }
}
