import { describe, expect, it } from 'vitest';
import { pageSchema } from '../../../src/contracts/paging.js';
import { EventSchema } from '../../../src/events/index.js';
import { textMessage, useTestAgentServer } from '../../helpers/agent-server.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { agentErrorEvent, messageEvent, pauseEvent, sampleHistory } from './fixtures.js';

const agent = useTestAgentServer();

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const EventPageSchema = pageSchema(EventSchema);

async function newEventsPath(): Promise<string> {
  return `/api/conversations/${(await agent.server.createConversation()).id}/events`;
}

async function exportNdjson(eventsPath: string): Promise<string> {
  const response = await agent.server.call('GET', `${eventsPath}/export`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/x-ndjson');
  return response.text();
}

/** `text` as a request body that arrives `size` bytes at a time (so multi-byte characters are cut too). */
function inPieces(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      for (let at = 0; at < bytes.length; at += size) controller.enqueue(bytes.slice(at, at + size));
      controller.close();
    },
  });
}

function ndjson(events: unknown[]): string {
  return events.map((event) => `${JSON.stringify(event)}\n`).join('');
}

describe('GET /api/conversations/{conversation_id}/events/export', () => {
  it('writes every event as one JSON line, in append order', async () => {
    const path = await newEventsPath();
    expect(await exportNdjson(path)).toBe('');
    await agent.server.call('POST', path, { json: textMessage('first') });
    await agent.server.callJson('POST', `${path}/import`, { json: sampleHistory() });
    await agent.server.call('POST', path, { json: textMessage('last') });

    const lines = (await exportNdjson(path)).split('\n');
    expect(lines.at(-1)).toBe('');
    const events = lines.slice(0, -1).map((line) => JSON.parse(line));
    expect(events.map((e) => e.id).slice(1, -1)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
    expect(events[0].llm_message.content[0].text).toBe('first');
    expect(events.at(-1).llm_message.content[0].text).toBe('last');
  });

  it('answers 404 for an unknown conversation', async () => {
    expect(await agent.server.callJson('GET', `/api/conversations/${UNKNOWN_ID}/events/export`)).toEqual({
      status: 404,
      body: { detail: 'Conversation not found' },
    });
  });
});

describe('POST /api/conversations/{conversation_id}/events/import', () => {
  it('round-trips: an export imported into a fresh conversation gives identical events', async () => {
    const source = await newEventsPath();
    await agent.server.call('POST', source, { json: textMessage('hello') });
    await agent.server.callJson('POST', `${source}/import`, { json: sampleHistory() });
    await agent.server.call('POST', source.replace(/events$/, 'pause'));
    const exported = await exportNdjson(source);

    const target = await newEventsPath();
    const imported = await agent.server.callJson('POST', `${target}/import`, {
      body: exported,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    // 7 recorded events, then the pause: a PauseEvent and its execution_status update.
    expect(imported).toEqual({ status: 200, body: { success: true, count: 9 } });
    expect(await exportNdjson(target)).toBe(exported);
    const search = (path: string) => agent.server.callJson('GET', `${path}/search?sort_order=TIMESTAMP_DESC`);
    expect((await search(target)).body).toEqual((await search(source)).body);
  });

  it('accepts a JSON array as well as NDJSON, whatever the content-type, and fills missing ids and timestamps', async () => {
    const path = await newEventsPath();
    const array = await agent.server.callJson('POST', `${path}/import`, { json: [pauseEvent('p1', '2024-01-01T00:00:00Z'), { kind: 'PauseEvent' }] });
    expect(array).toEqual({ status: 200, body: { success: true, count: 2 } });
    const lines = await agent.server.callJson('POST', `${path}/import`, {
      body: `\n${JSON.stringify(agentErrorEvent('a1', '2024-01-01T00:00:01Z'))}\n\n`,
      headers: { 'content-type': 'text/plain' },
    });
    expect(lines).toEqual({ status: 200, body: { success: true, count: 1 } });

    const { body } = await agent.server.callJson('GET', `${path}/search`, {}, EventPageSchema);
    expect(body.items).toHaveLength(3);
    const generated = body.items.find((e) => e.id !== 'p1' && e.id !== 'a1');
    expect(generated).toMatchObject({ kind: 'PauseEvent', source: 'user' });
    expect(Date.parse(generated?.timestamp ?? '')).not.toBeNaN();
  });

  it('appends nothing when one record is invalid, and reports every problem with its record index', async () => {
    const path = await newEventsPath();
    const body = [
      JSON.stringify(messageEvent('ok1', '2024-01-01T00:00:00Z', 'fine')),
      JSON.stringify({ kind: 'AgentErrorEvent', id: 'bad1', tool_name: 't', tool_call_id: 'c' }),
      '{"kind": "PauseEvent",',
      JSON.stringify({ kind: 'NoSuchEvent' }),
      JSON.stringify({ ...pauseEvent('bad2', '2024-01-01T00:00:00Z'), surprise: true }),
    ].join('\n');
    const { status, body: error } = await agent.server.callJson('POST', `${path}/import`, {
      body,
      headers: { 'content-type': 'application/x-ndjson' },
    }, ValidationErrorSchema);
    expect(status).toBe(422);
    expect(error.detail).toEqual([
      { loc: ['body', 1, 'error'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 2], msg: expect.stringMatching(/^Invalid JSON/), type: 'json_invalid' },
      { loc: ['body', 3, 'kind'], msg: expect.any(String), type: expect.any(String) },
      { loc: ['body', 4, 'surprise'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
    ]);
    expect((await agent.server.callJson('GET', `${path}/count`)).body).toBe(0);
  });

  it('refuses ids already stored or repeated in the batch, appending nothing', async () => {
    const path = await newEventsPath();
    await agent.server.callJson('POST', `${path}/import`, { json: [pauseEvent('p1', '2024-01-01T00:00:00Z')] });

    const stored = await agent.server.callJson('POST', `${path}/import`, {
      json: [pauseEvent('p2', '2024-01-01T00:00:01Z'), pauseEvent('p1', '2024-01-01T00:00:02Z')],
    }, ValidationErrorSchema);
    expect(stored.status).toBe(422);
    expect(stored.body.detail).toEqual([{ loc: ['body', 1, 'id'], msg: expect.any(String), type: 'value_error' }]);

    const repeated = await agent.server.callJson('POST', `${path}/import`, {
      json: [pauseEvent('p3', '2024-01-01T00:00:01Z'), pauseEvent('p3', '2024-01-01T00:00:02Z')],
    }, ValidationErrorSchema);
    expect(repeated.status).toBe(422);
    expect(repeated.body.detail).toEqual([{ loc: ['body', 1, 'id'], msg: expect.any(String), type: 'value_error' }]);

    expect((await agent.server.callJson('GET', `${path}/search`, {}, EventPageSchema)).body.items.map((e) => e.id)).toEqual(['p1']);
  });

  it('reads a JSON array as it arrives, cut anywhere (inside strings, records and characters), and appends it whole', async () => {
    const path = await newEventsPath();
    const texts = Array.from({ length: 300 }, (_, i) => `brackets ] } [ {, "quotes" and ✓ ${i}`);
    const events = texts.map((text, i) => messageEvent(`m${i}`, '2024-01-01T00:00:00Z', text));
    const imported = await agent.server.callJson('POST', `${path}/import`, {
      body: inPieces(JSON.stringify(events, null, 1), 7),
      headers: { 'content-type': 'application/json' },
    });
    expect(imported).toEqual({ status: 200, body: { success: true, count: 300 } });
    const stored = (await exportNdjson(path)).trim().split('\n').map((line) => JSON.parse(line));
    expect(stored.map((e) => [e.id, e.llm_message.content[0].text])).toEqual(texts.map((text, i) => [`m${i}`, text]));
  });

  it('answers 422 for a malformed or too deep JSON array, reporting every record, and commits nothing', async () => {
    const path = await newEventsPath();
    const good = JSON.stringify(pauseEvent('p1', '2024-01-01T00:00:00Z'));
    const deep = `${'['.repeat(3000)}${']'.repeat(3000)}`;
    const cases: [string, unknown[]][] = [
      [`[${good}, {"kind": "PauseEvent",, }, ${good}]`, [{ loc: ['body', 1], msg: expect.stringMatching(/^Invalid JSON/), type: 'json_invalid' }]],
      [`[${good}, ${good}`, [{ loc: ['body'], msg: 'Invalid JSON: the body ends before the array is closed', type: 'json_invalid' }]],
      [`[${good},]`, [{ loc: ['body'], msg: expect.stringMatching(/^Invalid JSON: a value is missing/), type: 'json_invalid' }]],
      [`[${good}] trailing`, [{ loc: ['body'], msg: 'Invalid JSON: unexpected data after the array', type: 'json_invalid' }]],
      [
        `[${deep}, {"kind": "NoSuchEvent"}]`,
        [
          { loc: ['body', 0], msg: 'JSON must not nest deeper than 100 levels', type: 'json_invalid' },
          { loc: ['body', 1, 'kind'], msg: expect.any(String), type: expect.any(String) },
        ],
      ],
    ];
    for (const [body, detail] of cases) {
      const answer = await agent.server.callJson('POST', `${path}/import`, { body: inPieces(body, 5), headers: { 'content-type': 'application/json' } });
      expect(answer).toEqual({ status: 422, body: { detail } });
    }
    expect((await agent.server.callJson('GET', `${path}/count`)).body).toBe(0);
  });

  it('answers 422 for a body that is not a list of events, and 404 for an unknown conversation', async () => {
    const path = await newEventsPath();
    expect(await agent.server.callJson('POST', `${path}/import`, { body: '[{"kind": ', headers: { 'content-type': 'application/json' } })).toEqual({
      status: 422,
      body: { detail: [{ loc: ['body'], msg: expect.stringMatching(/^Invalid JSON/), type: 'json_invalid' }] },
    });
    expect(await agent.server.callJson('POST', `${path}/import`, { json: ['not an event'] })).toEqual({
      status: 422,
      body: { detail: [{ loc: ['body', 0], msg: expect.any(String), type: expect.any(String) }] },
    });
    expect(await agent.server.callJson('POST', `/api/conversations/${UNKNOWN_ID}/events/import`, { json: [] })).toEqual({
      status: 404,
      body: { detail: 'Conversation not found' },
    });
  });
});
