import { EventSchema, jsonTextDepth, MAX_JSON_DEPTH, type Event } from '../../events/index.js';
import { RequestValidationError, invalidValuesFromZod, type InvalidValue } from '../../errors/index.js';
import { jsonTooDeepError } from '../../http/request-guards/index.js';

/**
 * Reads an import body: a JSON array of events, or NDJSON with one event per line (what the export
 * route writes; blank lines are ignored, so record indexes count records, not lines). Every record
 * is validated before any is returned, and all problems are reported at once with
 * the field `[<record index>, ...field]` of the body, so a caller appends the whole batch or nothing.
 *
 * NDJSON is read as it arrives, a line at a time: only the parsed events are kept, never the whole
 * text. A JSON array has to be read whole (the request's body limit bounds it).
 */
export async function readEventBatch(body: AsyncIterable<string> | Iterable<string>): Promise<Event[]> {
  const batch = new BatchBuilder();
  let pending = '';
  let isArray: boolean | undefined;
  for await (const text of body) {
    if (isArray === undefined) {
      pending += text;
      const start = pending.trimStart();
      if (start !== '') isArray = start.startsWith('[');
      continue;
    }
    const newline = text.lastIndexOf('\n');
    if (isArray || newline === -1) {
      pending += text;
      continue;
    }
    const lines = (pending + text.slice(0, newline)).split('\n');
    pending = text.slice(newline + 1);
    for (const line of lines) batch.addLine(line);
  }
  if (isArray) return eventsOfArray(pending);
  for (const line of pending.split('\n')) batch.addLine(line);
  return batch.finish();
}

/** Problems reported at most: a body of garbage lines must not become a larger answer. */
const MAX_PROBLEMS = 1000;

class BatchBuilder {
  private readonly events: Event[] = [];
  private readonly problems: InvalidValue[] = [];
  private failed = false;
  private index = 0;

  addLine(line: string): void {
    if (line.trim() === '') return;
    const index = this.index++;
    if (jsonTextDepth(line) > MAX_JSON_DEPTH) {
      this.report(...jsonTooDeepError('body', [index]).invalid);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.report({ in: 'body', field: [index], msg: `Invalid JSON: ${(error as Error).message}`, type: 'json_invalid' });
      return;
    }
    this.addValue(value, index);
  }

  addValue(value: unknown, index = this.index++): void {
    const parsed = EventSchema.safeParse(value);
    if (!parsed.success) this.report(...invalidValuesFromZod(parsed.error, 'body', [index]));
    // Once a record failed, nothing will be appended: the valid ones need not be kept.
    else if (!this.failed) this.events.push(parsed.data);
  }

  private report(...items: InvalidValue[]): void {
    this.problems.push(...items.slice(0, MAX_PROBLEMS - this.problems.length));
    this.failed = true;
  }

  finish(): Event[] {
    if (this.failed) throw new RequestValidationError(this.problems);
    return this.events;
  }
}

function eventsOfArray(text: string): Event[] {
  // The array itself is one level more than each record may nest.
  if (jsonTextDepth(text, MAX_JSON_DEPTH + 1) > MAX_JSON_DEPTH + 1) throw jsonTooDeepError('body');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new RequestValidationError([{ in: 'body', field: [], msg: `Invalid JSON: ${(error as Error).message}`, type: 'json_invalid' }]);
  }
  if (!Array.isArray(parsed)) {
    throw new RequestValidationError([{ in: 'body', field: [], msg: 'Input should be a valid list', type: 'list_type' }]);
  }
  const batch = new BatchBuilder();
  for (const value of parsed) batch.addValue(value);
  return batch.finish();
}
