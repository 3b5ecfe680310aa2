import { EventSchema, type Event } from '../../events/index.js';
import { RequestValidationError, validationItemsFromZod, type InvalidValue } from '../../errors/index.js';

/**
 * Reads an import body: a JSON array of events, or NDJSON with one event per line (what the export
 * route writes; blank lines are ignored, so record indexes count records, not lines). Every record
 * is validated before any is returned, and all problems are reported at once with
 * `loc: ['body', <record index>, ...field]`, so a caller appends the whole batch or nothing.
 */
export function parseEventBatch(body: string): Event[] {
  const records = body.trimStart().startsWith('[') ? jsonArrayRecords(body) : ndjsonRecords(body);
  const events: Event[] = [];
  const problems: InvalidValue[] = [];
  records.forEach((record, index) => {
    if ('invalid' in record) {
      problems.push({ loc: ['body', index], msg: record.invalid, type: 'json_invalid' });
      return;
    }
    const parsed = EventSchema.safeParse(record.value);
    if (parsed.success) events.push(parsed.data);
    else problems.push(...validationItemsFromZod(parsed.error, ['body', index]));
  });
  if (problems.length > 0) throw new RequestValidationError(problems);
  return events;
}

type RawRecord = { value: unknown } | { invalid: string };

function jsonArrayRecords(body: string): RawRecord[] {
  const parsed = parseJson(body);
  if ('invalid' in parsed) {
    throw new RequestValidationError([{ loc: ['body'], msg: parsed.invalid, type: 'json_invalid' }]);
  }
  if (!Array.isArray(parsed.value)) {
    throw new RequestValidationError([{ loc: ['body'], msg: 'Input should be a valid list', type: 'list_type' }]);
  }
  return parsed.value.map((value: unknown) => ({ value }));
}

function ndjsonRecords(body: string): RawRecord[] {
  return body
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map(parseJson);
}

function parseJson(text: string): RawRecord {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return { invalid: `Invalid JSON: ${(error as Error).message}` };
  }
}
