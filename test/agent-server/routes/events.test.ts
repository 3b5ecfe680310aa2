import { beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { pageSchema } from '../../../src/contracts/paging.js';
import { EventSchema, MessageEventSchema } from '../../../src/events/index.js';
import { textMessage, useTestAgentServer } from '../../helpers/agent-server.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { SAMPLE_TIMESTAMP_ORDER, sampleHistory } from './fixtures.js';

const agent = useTestAgentServer();
let base: string;

beforeEach(async () => {
  base = `/api/conversations/${(await agent.server.createConversation()).id}/events`;
});

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const EventPageSchema = pageSchema(EventSchema);
const MessageEventPageSchema = pageSchema(MessageEventSchema);

async function importSample(): Promise<void> {
  const { status } = await agent.server.callJson('POST', `${base}/import`, { json: sampleHistory() });
  expect(status).toBe(200);
}

async function searchIds(query: string): Promise<string[]> {
  const { status, body } = await agent.server.callJson('GET', `${base}/search?${query}`, {}, EventPageSchema);
  expect(status, query).toBe(200);
  return body.items.map((event) => event.id);
}

async function count(query: string): Promise<number> {
  const { status, body } = await agent.server.callJson('GET', `${base}/count?${query}`, {}, z.number());
  expect(status, query).toBe(200);
  return body;
}

describe('POST /api/conversations/{conversation_id}/events', () => {
  it('appends a MessageEvent whose source follows the role', async () => {
    expect(await agent.server.callJson('POST', base, { json: textMessage('Hello there') })).toEqual({ status: 200, body: { success: true } });
    expect((await agent.server.callJson('POST', base, { json: { content: [{ text: 'no role' }] } })).status).toBe(200);
    await agent.server.call('POST', base, { json: textMessage('I am the assistant', 'assistant') });
    await agent.server.call('POST', base, { json: textMessage('system note', 'system') });

    const { body } = await agent.server.callJson('GET', `${base}/search`, {}, MessageEventPageSchema);
    expect(body.items.map((e) => [e.source, e.llm_message.role])).toEqual([
      ['user', 'user'],
      ['user', 'user'],
      ['agent', 'assistant'],
      ['environment', 'system'],
    ]);
    expect(body.items[0]).toMatchObject({
      kind: 'MessageEvent',
      llm_message: { content: [{ type: 'text', text: 'Hello there', cache_prompt: false }] },
      llm_response_id: null,
    });
    expect(typeof body.items[0]?.id).toBe('string');
    expect(Date.parse(body.items[0]?.timestamp ?? '')).not.toBeNaN();
  });

  it('keeps every message sent concurrently', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => agent.server.callJson('POST', base, { json: textMessage(`message ${i}`) })),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const { body } = await agent.server.callJson('GET', `${base}/search`, {}, MessageEventPageSchema);
    const texts = body.items.map((e) => JSON.stringify(e.llm_message.content));
    expect(texts.sort()).toEqual(Array.from({ length: 20 }, (_, i) => JSON.stringify([{ type: 'text', text: `message ${i}`, cache_prompt: false }])).sort());
  });

  it('sets updated_at to the time of the append', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
      const created = await agent.server.createConversation();
      vi.setSystemTime(new Date('2030-01-01T00:05:00Z'));
      await agent.server.call('POST', `/api/conversations/${created.id}/events`, { json: textMessage('later') });
      const after = (await agent.server.callJson('GET', `/api/conversations/${created.id}`)).body;
      expect(after).toMatchObject({ created_at: '2030-01-01T00:00:00.000Z', updated_at: '2030-01-01T00:05:00.000Z' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers 422 for a bad message and 404 for an unknown conversation', async () => {
    const badRole = await agent.server.callJson('POST', base, { json: { role: 'robot', content: [] } }, ValidationErrorSchema);
    expect(badRole.status).toBe(422);
    expect(badRole.body.detail[0]).toMatchObject({ loc: ['body', 'role'], type: 'enum' });

    const badContent = await agent.server.callJson('POST', base, { json: { content: 'hello' } }, ValidationErrorSchema);
    expect(badContent.status).toBe(422);
    expect(badContent.body.detail[0]?.loc).toEqual(['body', 'content']);

    const malformed = await agent.server.callJson('POST', base, { body: '{', headers: { 'content-type': 'application/json' } });
    expect(malformed).toEqual({ status: 422, body: { detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] } });

    expect(await agent.server.callJson('POST', `/api/conversations/${UNKNOWN_ID}/events`, { json: textMessage('x') })).toEqual({
      status: 404,
      body: { detail: 'Conversation not found' },
    });
    expect(await count('')).toBe(0);
  });
});

describe('GET /api/conversations/{conversation_id}/events/search', () => {
  it('sorts by timestamp, either way, whatever the append order', async () => {
    await importSample();
    expect(await searchIds('')).toEqual(SAMPLE_TIMESTAMP_ORDER);
    expect(await searchIds('sort_order=TIMESTAMP')).toEqual(SAMPLE_TIMESTAMP_ORDER);
    expect(await searchIds('sort_order=TIMESTAMP_DESC')).toEqual([...SAMPLE_TIMESTAMP_ORDER].reverse());
  });

  it('filters by kind, source, body and time range, alone and together', async () => {
    await importSample();
    expect(await searchIds('kind=MessageEvent')).toEqual(['e1', 'e3', 'e6']);
    expect(await searchIds('kind=Message')).toEqual([]);
    expect(await searchIds('source=agent')).toEqual(['e3', 'e2']);
    expect(await searchIds('body=fix')).toEqual(['e1', 'e3']);
    expect(await searchIds('body=FIX%20THE')).toEqual(['e1']);
    expect(await searchIds('body=boom')).toEqual([]);
    expect(await searchIds('timestamp__gte=2024-05-01T10:00:02Z&timestamp__lt=2024-05-01T10:00:05Z')).toEqual(['e2', 'e4', 'e5']);
    expect(await searchIds('timestamp__gte=2024-05-01T12:00:03%2B02:00')).toEqual(['e4', 'e5', 'e6']);
    expect(await searchIds('timestamp__lt=2024-05-01T10:00:01')).toEqual(['e1']);
    expect(await searchIds('kind=MessageEvent&source=user&body=t&sort_order=TIMESTAMP_DESC')).toEqual(['e6', 'e1']);
  });

  it('pages with next_page_id, each event exactly once, in both orders', async () => {
    await importSample();
    for (const order of ['TIMESTAMP', 'TIMESTAMP_DESC']) {
      const seen: string[] = [];
      let pageId: string | null = null;
      do {
        const query: string = `sort_order=${order}&limit=4${pageId ? `&page_id=${encodeURIComponent(pageId)}` : ''}`;
        const { body } = await agent.server.callJson('GET', `${base}/search?${query}`, {}, EventPageSchema);
        expect(body.items.length).toBeLessThanOrEqual(4);
        seen.push(...body.items.map((e) => e.id));
        pageId = body.next_page_id;
      } while (pageId);
      expect(seen).toEqual(order === 'TIMESTAMP' ? SAMPLE_TIMESTAMP_ORDER : [...SAMPLE_TIMESTAMP_ORDER].reverse());
    }
    const first = await agent.server.callJson('GET', `${base}/search?limit=6`, {}, EventPageSchema);
    expect(first.body.next_page_id).toBeNull();
  });

  it('answers 404 for an unknown conversation', async () => {
    expect(await agent.server.callJson('GET', `/api/conversations/${UNKNOWN_ID}/events/search`)).toEqual({
      status: 404,
      body: { detail: 'Conversation not found' },
    });
  });

  it('answers 422 HTTPValidationError for each invalid parameter of spec section 7', async () => {
    const cases: [string, string, (string | number)[], string][] = [
      [base.replace(/[0-9a-f-]{36}/, 'not-a-uuid'), '', ['path', 'conversation_id'], 'uuid_parsing'],
      [base, 'limit=0', ['query', 'limit'], 'greater_than_equal'],
      [base, 'limit=101', ['query', 'limit'], 'less_than_equal'],
      [base, 'limit=ten', ['query', 'limit'], 'number_type'],
      [base, 'limit=99999999999999999999999', ['query', 'limit'], 'less_than_equal'],
      [base, 'timestamp__gte=yesterday', ['query', 'timestamp__gte'], 'datetime_parsing'],
      [base, 'timestamp__lt=2024-13-01T00:00:00Z', ['query', 'timestamp__lt'], 'datetime_parsing'],
      [base, 'sort_order=NEWEST', ['query', 'sort_order'], 'enum'],
      [base, 'source=system', ['query', 'source'], 'enum'],
      [base, 'page_id=no-such-event', ['query', 'page_id'], 'value_error'],
    ];
    for (const [path, query, loc, type] of cases) {
      const { status, body } = await agent.server.callJson('GET', `${path}/search?${query}`, {}, ValidationErrorSchema);
      expect(status, `${path} ${query}`).toBe(422);
      // A huge limit breaks two bounds (safe integer and 100); every entry names the parameter.
      expect(body.detail.length, query).toBeGreaterThan(0);
      for (const item of body.detail) expect(item, query).toEqual({ loc, msg: expect.any(String), type });
    }
  });
});

describe('GET /api/conversations/{conversation_id}/events/count', () => {
  it('counts with the same filters as search', async () => {
    expect(await count('')).toBe(0);
    await importSample();
    expect(await count('')).toBe(6);
    expect(await count('kind=MessageEvent')).toBe(3);
    expect(await count('source=agent')).toBe(2);
    expect(await count('body=fix')).toBe(2);
    expect(await count('timestamp__gte=2024-05-01T10:00:03Z')).toBe(3);
    expect(await count('kind=PauseEvent&source=user')).toBe(1);
  });

  it('answers 422 for a bad filter and 404 for an unknown conversation', async () => {
    const bad = await agent.server.callJson('GET', `${base}/count?timestamp__lt=soon`);
    expect(bad).toEqual({
      status: 422,
      body: { detail: [{ loc: ['query', 'timestamp__lt'], msg: 'Input should be a valid datetime', type: 'datetime_parsing' }] },
    });
    expect(await agent.server.callJson('GET', `/api/conversations/${UNKNOWN_ID}/events/count`)).toEqual({
      status: 404,
      body: { detail: 'Conversation not found' },
    });
  });
});

describe('GET /api/conversations/{conversation_id}/events/{event_id}', () => {
  it('answers the event, or 404 for an unknown event or conversation', async () => {
    await importSample();
    const { status, body } = await agent.server.callJson('GET', `${base}/e3`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: 'e3', kind: 'MessageEvent', source: 'agent', timestamp: '2024-05-01T10:00:01+00:00' });
    // OpenHands' generic body for both.
    expect(await agent.server.callJson('GET', `${base}/nope`)).toEqual({ status: 404, body: { detail: 'Not Found' } });
    expect(await agent.server.callJson('GET', `/api/conversations/${UNKNOWN_ID}/events/e3`)).toEqual({
      status: 404,
      body: { detail: 'Not Found' },
    });
  });
});
