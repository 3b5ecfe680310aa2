import { appendFile, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CorruptEventLogError, openEventLog, type StoredEvent } from '../../../src/agent-server/store/index.js';
import { eventMaker, makeTempDir } from './fixtures.js';
import { seededRandom } from '../../helpers/seeded-random.js';

describe('event log recovery at open', () => {
  let file: string;
  let remove: () => Promise<void>;
  let events: StoredEvent[];
  let intactBytes: number;

  beforeEach(async () => {
    const temp = await makeTempDir();
    remove = temp.remove;
    file = join(temp.dir, 'events.ndjson');
    const maker = eventMaker(seededRandom(5));
    events = Array.from({ length: 20 }, () => maker.next());
    const log = await openEventLog(file);
    await log.append(events);
    await log.close();
    intactBytes = (await stat(file)).size;
  });

  afterEach(() => remove());

  async function expectRepaired(): Promise<void> {
    const log = await openEventLog(file);
    expect(log.size).toBe(events.length);
    expect(await log.readRange(0, log.size)).toEqual(events);
    expect((await stat(file)).size).toBe(intactBytes);
    const later = { id: 'later', kind: 'PauseEvent', source: 'user', timestamp: '2030-01-01T00:00:00Z' };
    await log.append([later]);
    await log.close();

    const reopened = await openEventLog(file);
    expect(await reopened.readRange(0, reopened.size)).toEqual([...events, later]);
    await reopened.close();
  }

  it('cuts half a record left by a crash mid-write', async () => {
    const half = JSON.stringify({ id: 'torn', kind: 'PauseEvent', source: 'user', timestamp: '2030-01-01T00:00:00Z' }).slice(0, 30);
    await appendFile(file, half);
    await expectRepaired();
  });

  it('cuts a complete-looking tail that does not parse, and zero-filled blocks', async () => {
    await appendFile(file, '{"id":"x","kind":\n\0\0\0\0\0\0');
    await expectRepaired();
  });

  it('cuts a last line that parses but is no event', async () => {
    await appendFile(file, '{"id":"no-timestamp","kind":"PauseEvent","source":"user"}\n');
    await expectRepaired();
  });

  it('refuses to open a log damaged before its last record', async () => {
    const text = await readFile(file, 'utf8');
    const lines = text.split('\n');
    lines[3] = lines[3]!.slice(0, 10);
    await writeFile(file, lines.join('\n'));
    const error = await openEventLog(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptEventLogError);
    expect((error as CorruptEventLogError).offset).toBe(Buffer.byteLength(`${lines.slice(0, 3).join('\n')}\n`));
  });

  it('refuses to open a log that stores one id twice', async () => {
    await appendFile(file, `${JSON.stringify(events[0])}\n`);
    await expect(openEventLog(file)).rejects.toBeInstanceOf(CorruptEventLogError);
  });

  it('drops every line of a multi-event batch a crash left unfinished, complete lines included', async () => {
    // The 20 events above went in as one batch, so the log keeps a closed commit marker beside it.
    expect((await readFile(`${file}.batch`, 'utf8')).trim()).toBe('{"open":-1}');
    const more = Array.from({ length: 3 }, (_, i) => ({ id: `more-${i}`, kind: 'PauseEvent', source: 'user', timestamp: '2030-01-01T00:00:00Z' }));
    // What a kill mid-write leaves: the marker opened at the old end, two whole lines and half a third.
    await writeFile(`${file}.batch`, `{"open":${intactBytes}}`.padEnd(63, ' ') + '\n');
    await appendFile(file, `${JSON.stringify(more[0])}\n${JSON.stringify(more[1])}\n${JSON.stringify(more[2]).slice(0, 20)}`);
    await expectRepaired();
    expect((await readFile(`${file}.batch`, 'utf8')).trim()).toBe('{"open":-1}');
  });
});
