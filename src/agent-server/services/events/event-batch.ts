import { EventSchema, jsonTextDepth, MAX_JSON_DEPTH, type Event } from '../../../events/index.js';
import { RequestValidationError, invalidValuesFromZod, type InvalidValue } from '../../../errors/index.js';
import { jsonTooDeepError } from '../../../http/request-guards/index.js';
import { JsonArrayReader } from './json-array-reader.js';

/**
 * Reads an import body: a JSON array of events, or NDJSON with one event per line (what the export
 * route writes; blank lines are ignored, so record indexes count records, not lines). Every record
 * is validated before any is returned, and all problems are reported at once with
 * the field `[<record index>, ...field]` of the body, so a caller appends the whole batch or nothing.
 *
 * Both are read as they arrive, a record at a time: only the parsed events are kept, never the
 * whole text.
 */
export async function readEventBatch(body: AsyncIterable<string> | Iterable<string>): Promise<Event[]> {
  const batch = new BatchBuilder();
  let pending = '';
  let array: JsonArrayReader | undefined;
  let isArray: boolean | undefined;
  for await (const text of body) {
    if (isArray === undefined) {
      pending += text;
      const start = pending.trimStart();
      if (start === '') continue;
      isArray = start.startsWith('[');
      if (!isArray) continue;
      array = batch.arrayReader();
      array.push(pending);
      pending = '';
    } else if (array) {
      array.push(text);
    } else {
      const newline = text.lastIndexOf('\n');
      if (newline === -1) {
        pending += text;
        continue;
      }
      const lines = (pending + text.slice(0, newline)).split('\n');
      pending = text.slice(newline + 1);
      for (const line of lines) batch.addLine(line);
    }
  }
  if (array) array.end();
  else for (const line of pending.split('\n')) batch.addLine(line);
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
    this.addText(line, this.index++, jsonTextDepth(line));
  }

  /** A reader of a JSON array whose elements are this batch's records; its structural errors are the body's. */
  arrayReader(): JsonArrayReader {
    return new JsonArrayReader({
      onElement: (text, index, depth) => this.addText(text, index, depth),
      onInvalid: (msg, type) => this.report({ in: 'body', field: [], msg, type }),
    });
  }

  private addText(text: string, index: number, depth: number): void {
    if (depth > MAX_JSON_DEPTH) {
      this.report(...jsonTooDeepError('body', [index]).invalid);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.report({ in: 'body', field: [index], msg: `Invalid JSON: ${(error as Error).message}`, type: 'json_invalid' });
      return;
    }
    this.addValue(value, index);
  }

  private addValue(value: unknown, index: number): void {
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
