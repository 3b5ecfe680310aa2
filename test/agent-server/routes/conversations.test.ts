import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { EventSchema } from '../../../src/events/index.js';
import { startRequest, textMessage, useTestAgentServer } from '../../helpers/agent-server.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
// After the helpers: they load @hono/zod-openapi, which must extend zod before any contract is built.
import { ConversationInfoSchema, ConversationPageSchema } from '../../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../../src/contracts/paging.js';

const agent = useTestAgentServer();

const NOT_FOUND = { detail: 'Conversation not found' };
const EventPageSchema = pageSchema(EventSchema);
/** The part of the OpenAPI document a test reads (loose: the rest of it is kept as sent): each operation's responses. */
const OpenApiPathsSchema = z.looseObject({ paths: z.record(z.string(), z.record(z.string(), z.looseObject({ responses: z.record(z.string(), z.unknown()) }))) });

/** The persisted metadata of a conversation, as the next start will read it. */
async function readMetadata(id: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(agent.dataDir, 'conversations', id, 'meta.json'), 'utf8'));
}
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

describe('POST /api/conversations', () => {
  it('creates a conversation (201) and answers the existing one (200) for a repeated conversation_id', async () => {
    const id = randomUUID();
    const first = await agent.server.callJson('POST', '/api/conversations', { json: startRequest({ conversation_id: id, tags: { env: 'dev' } }) }, ConversationInfoSchema);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      id,
      agent: { kind: 'Agent', llm: { model: 'test-model', base_url: 'http://127.0.0.1:9/v1' } },
      workspace: { kind: 'LocalWorkspace', working_dir: '/workspace' },
      execution_status: 'idle',
      confirmation_policy: { kind: 'NeverConfirm' },
      max_iterations: 500,
      title: null,
      tags: { env: 'dev' },
    });
    expect(Date.parse(first.body.created_at)).not.toBeNaN();

    const again = await agent.server.callJson('POST', '/api/conversations', {
      json: startRequest({ conversation_id: id, tags: { env: 'prod' } }),
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await agent.server.callJson('GET', '/api/conversations/count')).body).toBe(1);
  });

  it('creates a conversation once when the same conversation_id is started concurrently', async () => {
    const id = randomUUID();
    const answers = await Promise.all(
      [1, 2, 3].map(() => agent.server.callJson('POST', '/api/conversations', { json: startRequest({ conversation_id: id }) })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
    expect((await agent.server.callJson('GET', '/api/conversations/count')).body).toBe(1);
  });

  it('generates an id when none is given and keeps an upper-case one in canonical form', async () => {
    const generated = await agent.server.createConversation();
    expect(generated.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const upper = randomUUID().toUpperCase();
    const created = await agent.server.createConversation({ conversation_id: upper });
    expect(created.id).toBe(upper.toLowerCase());
    expect((await agent.server.call('GET', `/api/conversations/${upper}`)).status).toBe(200);
  });

  it('never answers the LLM key or the secrets', async () => {
    const created = await agent.server.createConversation({
      secrets: { GITHUB_TOKEN: 'ghp-secret', OTHER: { kind: 'StaticSecret', value: 'static-secret' } },
      agent: {
        kind: 'Agent',
        llm: { model: 'm', api_key: 'sk-secret', extra_headers: { 'X-Gateway-Key': 'hdr-secret' } },
        condenser: { kind: 'LLMSummarizingCondenser', llm: { model: 'c', api_key: 'sk-condenser' } },
      },
    });
    const fetched = await agent.server.callJson('GET', `/api/conversations/${created.id}`, {}, ConversationInfoSchema);
    for (const body of [created, fetched.body]) {
      const text = JSON.stringify(body);
      expect(text).not.toMatch(/sk-secret|hdr-secret|ghp-secret|static-secret|sk-condenser/);
      expect(body.agent).toMatchObject({
        llm: { api_key: '**********', extra_headers: { 'X-Gateway-Key': '**********' } },
        condenser: { llm: { api_key: '**********' } },
      });
    }
    const withoutKey = await agent.server.createConversation({ agent: { llm: { model: 'm', api_key: null } } });
    expect(withoutKey.agent.llm.api_key).toBeNull();
  });

  it('accepts what OpenHands clients send besides the fields it uses', async () => {
    const { status, body } = await agent.server.callJson('POST', '/api/conversations', {
      json: {
        agent: { kind: 'Agent', llm: { model: 'm', usage_id: 'agent', temperature: 0 }, tools: [{ name: 'TerminalTool', params: {} }], agent_context: null },
        workspace: { type: 'local', working_dir: '/w' },
        max_iterations: 50,
        stuck_detection: false,
        hook_config: null,
        user_id: null,
        confirmation_policy: { kind: 'ConfirmRisky' },
      },
    });
    expect(status).toBe(201);
    expect(body).toMatchObject({
      agent: { llm: { usage_id: 'agent', temperature: 0 }, tools: [{ name: 'TerminalTool', params: {} }] },
      workspace: { kind: 'LocalWorkspace', working_dir: '/w' },
      max_iterations: 50,
      stuck_detection: false,
      confirmation_policy: { kind: 'ConfirmRisky', threshold: 'HIGH', confirm_unknown: true },
    });
  });

  it('turns initial_message into a user MessageEvent', async () => {
    const created = await agent.server.createConversation({ initial_message: textMessage('Fix the bug') });
    const events = await agent.server.callJson('GET', `/api/conversations/${created.id}/events/search`, {}, EventPageSchema);
    expect(events.body.items).toHaveLength(1);
    expect(events.body.items[0]).toMatchObject({
      kind: 'MessageEvent',
      source: 'user',
      llm_message: { role: 'user', content: [{ type: 'text', text: 'Fix the bug' }] },
    });
    expect(created.execution_status).toBe('idle');
  });

  it('answers 422 with FastAPI bodies for invalid requests', async () => {
    const missing = await agent.server.callJson('POST', '/api/conversations', { json: { workspace: { working_dir: '/w' } } });
    expect(missing).toEqual({ status: 422, body: { detail: [{ loc: ['body', 'agent'], msg: 'Field required', type: 'missing' }] } });

    const badId = await agent.server.callJson('POST', '/api/conversations', { json: startRequest({ conversation_id: 'nope' }) });
    expect(badId).toEqual({
      status: 422,
      body: { detail: [{ loc: ['body', 'conversation_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }] },
    });

    const badTag = await agent.server.callJson('POST', '/api/conversations', { json: startRequest({ tags: { Env: 'x' } }) }, ValidationErrorSchema);
    expect(badTag.status).toBe(422);
    expect(badTag.body.detail[0]?.loc.slice(0, 2)).toEqual(['body', 'tags']);

    const badPolicy = await agent.server.callJson('POST', '/api/conversations', {
      json: startRequest({ confirmation_policy: { kind: 'SometimesConfirm' } }),
    }, ValidationErrorSchema);
    expect(badPolicy.status).toBe(422);
    expect(badPolicy.body.detail[0]?.loc).toEqual(['body', 'confirmation_policy', 'kind']);

    const noModel = await agent.server.callJson('POST', '/api/conversations', { json: startRequest({ agent: { llm: {} } }) }, ValidationErrorSchema);
    expect(noModel.body.detail).toEqual([{ loc: ['body', 'agent', 'llm', 'model'], msg: 'Field required', type: 'missing' }]);
  });

  it('answers 422 for a malformed JSON body, a body that is not an object, and a body that is not JSON', async () => {
    const malformed = await agent.server.callJson('POST', '/api/conversations', {
      body: '{"agent": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed).toEqual({ status: 422, body: { detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] } });

    const array = await agent.server.callJson('POST', '/api/conversations', { json: [1, 2] }, ValidationErrorSchema);
    expect(array.status).toBe(422);
    expect(array.body.detail[0]?.loc).toEqual(['body']);

    const contentTypes: Record<string, string>[] = [{ 'content-type': 'text/plain' }, {}];
    for (const headers of contentTypes) {
      const notJson = await agent.server.callJson('POST', '/api/conversations', { body: JSON.stringify(startRequest()), headers });
      expect(notJson).toEqual({
        status: 422,
        body: {
          detail: [{ loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', type: 'model_attributes_type' }],
        },
      });
    }
  });
});

describe('GET /api/conversations/{conversation_id}', () => {
  it('answers the conversation, 404 for an unknown one and 422 for a malformed id', async () => {
    const created = await agent.server.createConversation({ title: 'First' });
    expect(await agent.server.callJson('GET', `/api/conversations/${created.id}`)).toEqual({ status: 200, body: created });
    expect(await agent.server.callJson('GET', `/api/conversations/${UNKNOWN_ID}`)).toEqual({ status: 404, body: { detail: 'Not Found' } });
    expect(await agent.server.callJson('GET', '/api/conversations/not-a-uuid')).toEqual({
      status: 422,
      body: { detail: [{ loc: ['path', 'conversation_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }] },
    });
  });
});

describe('GET /api/conversations (batch)', () => {
  it('answers one entry per id, in order, null for unknown ids', async () => {
    const a = await agent.server.createConversation();
    const b = await agent.server.createConversation();
    const { status, body } = await agent.server.callJson('GET', `/api/conversations?ids=${b.id}&ids=${UNKNOWN_ID}&ids=${a.id}`);
    expect(status).toBe(200);
    expect(body).toEqual([b, null, a]);
    expect((await agent.server.callJson('GET', `/api/conversations?ids=${a.id}`)).body).toEqual([a]);
  });

  it('answers 400 for more than 100 ids and 422 for a malformed or missing one', async () => {
    const ids = Array.from({ length: 101 }, () => `ids=${randomUUID()}`).join('&');
    const tooMany = await agent.server.callJson('GET', `/api/conversations?${ids}`);
    expect(tooMany).toEqual({ status: 400, body: { detail: 'Too many ids: at most 100 per request' } });

    const hundred = Array.from({ length: 100 }, () => `ids=${randomUUID()}`).join('&');
    expect((await agent.server.callJson('GET', `/api/conversations?${hundred}`)).body).toHaveLength(100);

    const malformed = await agent.server.callJson('GET', `/api/conversations?ids=${UNKNOWN_ID}&ids=x`);
    expect(malformed).toEqual({
      status: 422,
      body: { detail: [{ loc: ['query', 'ids', 1], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }] },
    });
    const missing = await agent.server.callJson('GET', '/api/conversations', {}, ValidationErrorSchema);
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]?.loc).toEqual(['query', 'ids']);
  });
});

describe('GET /api/conversations/search and /count', () => {
  it('pages through conversations in every sort order, exactly once each', async () => {
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await agent.server.createConversation());
    const ascending = [...created].sort((x, y) => x.created_at.localeCompare(y.created_at) || x.id.localeCompare(y.id));

    const collect = async (sortOrder: string): Promise<string[]> => {
      const ids: string[] = [];
      let pageId: string | null = null;
      do {
        const query: string = `sort_order=${sortOrder}&limit=2${pageId ? `&page_id=${pageId}` : ''}`;
        const { status, body } = await agent.server.callJson('GET', `/api/conversations/search?${query}`, {}, ConversationPageSchema);
        expect(status).toBe(200);
        expect(body.items.length).toBeLessThanOrEqual(2);
        ids.push(...body.items.map((c) => c.id));
        pageId = body.next_page_id;
      } while (pageId);
      return ids;
    };
    expect(await collect('CREATED_AT')).toEqual(ascending.map((c) => c.id));
    expect(await collect('CREATED_AT_DESC')).toEqual(ascending.map((c) => c.id).reverse());

    // Touching the oldest one makes it the most recently updated.
    await agent.server.call('POST', `/api/conversations/${ascending[0]!.id}/events`, { json: textMessage('hi') });
    const byUpdate = await collect('UPDATED_AT');
    expect(byUpdate.at(-1)).toBe(ascending[0]!.id);
    expect(await collect('UPDATED_AT_DESC')).toEqual([...byUpdate].reverse());
  });

  it('defaults to CREATED_AT_DESC and 100 per page', async () => {
    for (let i = 0; i < 3; i++) await agent.server.createConversation();
    const byDefault = await agent.server.callJson('GET', '/api/conversations/search', {}, ConversationPageSchema);
    const explicit = await agent.server.callJson('GET', '/api/conversations/search?sort_order=CREATED_AT_DESC&limit=100');
    expect(byDefault.body).toEqual(explicit.body);
    expect(byDefault.body.items).toHaveLength(3);
    expect(byDefault.body.next_page_id).toBeNull();
  });

  it('filters by execution status in search and count', async () => {
    const paused = await agent.server.createConversation();
    await agent.server.createConversation();
    await agent.server.call('POST', `/api/conversations/${paused.id}/pause`);
    expect((await agent.server.callJson('GET', '/api/conversations/count')).body).toBe(2);
    expect((await agent.server.callJson('GET', '/api/conversations/count?status=paused')).body).toBe(1);
    expect((await agent.server.callJson('GET', '/api/conversations/count?status=running')).body).toBe(0);
    const { body } = await agent.server.callJson('GET', '/api/conversations/search?status=paused', {}, ConversationPageSchema);
    expect(body.items.map((c) => c.id)).toEqual([paused.id]);
    expect(body.items[0]?.execution_status).toBe('paused');
  });

  it('answers 422 for a bad limit, status, sort_order or page_id', async () => {
    const cases: [string, (string | number)[]][] = [
      ['limit=0', ['query', 'limit']],
      ['limit=101', ['query', 'limit']],
      ['limit=abc', ['query', 'limit']],
      ['limit=1e400', ['query', 'limit']],
      ['status=sleeping', ['query', 'status']],
      ['sort_order=NEWEST', ['query', 'sort_order']],
      ['page_id=garbage', ['query', 'page_id']],
    ];
    for (const [query, loc] of cases) {
      const { status, body } = await agent.server.callJson('GET', `/api/conversations/search?${query}`, {}, ValidationErrorSchema);
      expect(status, query).toBe(422);
      expect(body.detail, query).toEqual([expect.objectContaining({ loc, msg: expect.any(String), type: expect.any(String) })]);
    }
    const count = await agent.server.callJson('GET', '/api/conversations/count?status=nope', {}, ValidationErrorSchema);
    expect(count.status).toBe(422);
    expect(count.body.detail[0]).toMatchObject({ loc: ['query', 'status'], type: 'enum' });
  });
});

describe('PATCH /api/conversations/{conversation_id}', () => {
  it('sets the title and replaces the tags', async () => {
    const created = await agent.server.createConversation({ tags: { a: '1', b: '2' } });
    expect(await agent.server.callJson('PATCH', `/api/conversations/${created.id}`, { json: { title: 'Renamed', tags: { c: '3' } } })).toEqual({
      status: 200,
      body: { success: true },
    });
    const fetched = (await agent.server.callJson('GET', `/api/conversations/${created.id}`, {}, ConversationInfoSchema)).body;
    expect(fetched).toMatchObject({ title: 'Renamed', tags: { c: '3' } });
    expect(fetched.updated_at >= created.updated_at).toBe(true);

    await agent.server.call('PATCH', `/api/conversations/${created.id}`, { json: { title: null } });
    expect((await agent.server.callJson('GET', `/api/conversations/${created.id}`)).body).toMatchObject({ title: null, tags: { c: '3' } });
  });

  it('answers 404 for an unknown conversation and 422 for bad tags', async () => {
    expect(await agent.server.callJson('PATCH', `/api/conversations/${UNKNOWN_ID}`, { json: { title: 't' } })).toEqual({
      status: 404,
      body: NOT_FOUND,
    });
    const created = await agent.server.createConversation();
    const long = await agent.server.callJson('PATCH', `/api/conversations/${created.id}`, { json: { tags: { k: 'x'.repeat(257) } } }, ValidationErrorSchema);
    expect(long.status).toBe(422);
    expect(long.body.detail[0]).toMatchObject({ loc: ['body', 'tags', 'k'], type: 'too_long' });
  });
});

describe('DELETE /api/conversations/{conversation_id}', () => {
  it('removes the conversation and its events', async () => {
    const created = await agent.server.createConversation({ initial_message: textMessage('hello') });
    expect(await agent.server.callJson('DELETE', `/api/conversations/${created.id}`)).toEqual({ status: 200, body: { success: true } });
    expect((await agent.server.callJson('GET', `/api/conversations/${created.id}`)).status).toBe(404);
    expect((await agent.server.callJson('GET', `/api/conversations/${created.id}/events/search`)).status).toBe(404);
    expect(await agent.server.callJson('DELETE', `/api/conversations/${created.id}`)).toEqual({ status: 404, body: NOT_FOUND });

    const again = await agent.server.createConversation({ conversation_id: created.id });
    expect((await agent.server.callJson('GET', `/api/conversations/${again.id}/events/count`)).body).toBe(0);
  });
});

describe('POST /api/conversations/{conversation_id}/run and /pause', () => {
  it('pauses with one PauseEvent from the user', async () => {
    const created = await agent.server.createConversation();
    expect(await agent.server.callJson('POST', `/api/conversations/${created.id}/pause`)).toEqual({ status: 200, body: { success: true } });
    expect(await agent.server.callJson('POST', `/api/conversations/${created.id}/pause`, { json: {} })).toEqual({
      status: 200,
      body: { success: true },
    });

    const events = (await agent.server.callJson('GET', `/api/conversations/${created.id}/events/search?kind=PauseEvent`, {}, EventPageSchema)).body.items;
    expect(events).toEqual([expect.objectContaining({ kind: 'PauseEvent', source: 'user' })]);
    expect((await agent.server.callJson('GET', `/api/conversations/${created.id}`, {}, ConversationInfoSchema)).body.execution_status).toBe('paused');
    await vi.waitFor(async () => expect(await readMetadata(created.id)).toMatchObject({ execution_status: 'paused' }));
  });

  it('answers 404 for an unknown conversation and 422 for a malformed id', async () => {
    for (const verb of ['run', 'pause']) {
      expect(await agent.server.callJson('POST', `/api/conversations/${UNKNOWN_ID}/${verb}`)).toEqual({ status: 404, body: NOT_FOUND });
      const malformed = await agent.server.callJson('POST', `/api/conversations/123/${verb}`, {}, ValidationErrorSchema);
      expect(malformed.status).toBe(422);
      expect(malformed.body.detail[0]?.loc).toEqual(['path', 'conversation_id']);
    }
  });
});

describe('a workspace that cannot be created', () => {
  it('is a 409 naming it on every route that runs the agent, each of which documents it', async () => {
    // A regular file where the workspace's parent directory should be.
    const file = join(agent.dataDir, 'not-a-directory');
    await writeFile(file, '');
    const workspace = join(file, 'workspace');
    const { body: created } = await agent.server.callJson('POST', '/api/conversations', { json: startRequest({ workspace: { working_dir: workspace } }) }, ConversationInfoSchema);
    const path = `/api/conversations/${created.id}`;
    const conflict = { status: 409, body: { detail: expect.stringContaining(`workspace ${workspace} cannot be used`) } };
    expect(await agent.server.callJson('POST', `${path}/run`)).toEqual(conflict);
    expect(await agent.server.callJson('POST', `${path}/pause`)).toEqual(conflict);
    expect(await agent.server.callJson('POST', `${path}/confirmation_policy`, { json: { policy: { kind: 'NeverConfirm' } } })).toEqual(conflict);
    expect(await agent.server.callJson('POST', `${path}/events/respond_to_confirmation`, { json: { accept: true } })).toEqual(conflict);
    expect(await agent.server.callJson('POST', `${path}/events`, { json: { ...textMessage('hi'), run: true } })).toEqual(conflict);
    expect(
      await agent.server.callJson('POST', '/api/conversations', {
        json: startRequest({ workspace: { working_dir: workspace }, initial_message: { ...textMessage('hi'), run: true } }),
      }),
    ).toEqual(conflict);

    const { body: document } = await agent.server.callJson('GET', '/openapi.json', {}, OpenApiPathsSchema);
    const operations = [
      ['/api/conversations', 'post'],
      ['/api/conversations/{conversation_id}/run', 'post'],
      ['/api/conversations/{conversation_id}/pause', 'post'],
      ['/api/conversations/{conversation_id}/confirmation_policy', 'post'],
      ['/api/conversations/{conversation_id}/events/respond_to_confirmation', 'post'],
      ['/api/conversations/{conversation_id}/events', 'post'],
    ] as const;
    for (const [route, method] of operations) expect(Object.keys(document.paths[route]?.[method]?.responses ?? {}), route).toContain('409');
  });
});
