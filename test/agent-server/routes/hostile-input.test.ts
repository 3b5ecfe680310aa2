/**
 * Inputs that used to crash or stall the agent-server (issue 15): each gets a 4xx with a FastAPI
 * body, saves nothing, and leaves the server serving.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentServerApp, type AgentServer } from '../../../src/agent-server/app.js';
import type { z } from 'zod';
import { startRequest } from '../../helpers/agent-server.js';
import { readAnswer, ValidationErrorSchema } from '../../helpers/answer.js';
// After the helpers: they load @hono/zod-openapi, which must extend zod before any contract is built.
import { BashOutputSchema } from '../../../src/contracts/agent-server/bash.js';
import { ConversationInfoSchema } from '../../../src/contracts/agent-server/conversation-info.js';

let root: string;
let server: AgentServer;

async function open(options: { maxRequestBodyBytes?: number } = {}): Promise<AgentServer> {
  return createAgentServerApp({ dataDir: join(root, 'data'), sessionKeys: [], workspaceDir: join(root, 'workspace'), ...options });
}

function post(path: string, body: string, contentType = 'application/json'): Promise<Response> {
  return Promise.resolve(server.app.request(path, { method: 'POST', headers: { 'content-type': contentType }, body }));
}

/** The body, checked against `schema` where a test reads its fields (see readAnswer). */
async function json<S extends z.ZodType = z.ZodUnknown>(response: Response, schema?: S): Promise<z.output<S>> {
  return (await readAnswer(response, schema)).body;
}

/** An answer within `ms`, or a failure naming the stall. */
async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'hostile-input-'));
  server = await open();
});

afterEach(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

describe('JSON nested thousands deep', () => {
  const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('is a 422 when starting a conversation, saves nothing, and search keeps working across a restart', async () => {
    const body = JSON.stringify(startRequest()).replace('"kind":"Agent"', `"kind":"Agent","extra":${deep(5000)}`);
    const response = await post('/api/conversations', body);
    expect(response.status).toBe(422);
    expect(await json(response)).toEqual({ detail: [{ loc: ['body'], msg: 'JSON must not nest deeper than 100 levels', type: 'json_invalid' }] });
    expect(await readdir(join(root, 'data', 'conversations'))).toEqual([]);
    await server.close();
    server = await open();
    expect((await server.app.request('/api/conversations/search')).status).toBe(200);
  });

  it('is a 422 for one record of an import, nothing of which is stored', async () => {
    const created = (await (await post('/api/conversations', JSON.stringify(startRequest()))).json()) as { id: string };
    const event = { kind: 'PauseEvent', id: 'p1', timestamp: '2024-01-01T00:00:00Z', source: 'user' };
    const nested = { kind: 'ConversationStateUpdateEvent', id: 's1', timestamp: '2024-01-01T00:00:01Z', source: 'environment', key: 'k', value: 0 };
    const lines = [JSON.stringify(event), JSON.stringify(nested).replace('"value":0', `"value":${deep(3000)}`)].join('\n');
    const response = await post(`/api/conversations/${created.id}/events/import`, lines, 'application/x-ndjson');
    expect(response.status).toBe(422);
    expect((await json(response, ValidationErrorSchema)).detail).toEqual([{ loc: ['body', 1], msg: 'JSON must not nest deeper than 100 levels', type: 'json_invalid' }]);
    expect(await (await server.app.request(`/api/conversations/${created.id}/events/count`)).json()).toBe(0);
  });

  it('settings just under the limit are saved compactly, not indented into megabytes', async () => {
    const nested = `${'{"a":'.repeat(90)}1${'}'.repeat(90)}`;
    const body = JSON.stringify(startRequest()).replace('"kind":"Agent"', `"kind":"Agent","extra":${nested}`);
    const response = await post('/api/conversations', body);
    expect(response.status).toBe(201);
    const { id } = await json(response, ConversationInfoSchema);
    const saved = await readFile(join(root, 'data', 'conversations', id, 'meta.json'), 'utf8');
    expect(saved.length).toBeLessThan(2 * body.length);
  });
});

describe('bash and files', () => {
  it('refuses a NUL byte in a command', async () => {
    const response = await post('/api/bash/execute_bash_command', JSON.stringify({ command: 'true\u0000' }));
    expect(response.status).toBe(422);
    expect((await json(response, ValidationErrorSchema)).detail[0]).toMatchObject({ loc: ['body', 'command'], msg: 'Must not contain NUL bytes' });
  });

  it('answers 422 for a 300-character file name on upload and download', async () => {
    const path = join(root, 'workspace', 'n'.repeat(300));
    const form = new FormData();
    form.append('file', new Blob(['x']), 'f');
    const upload = await server.app.request(`/api/file/upload?path=${encodeURIComponent(path)}`, { method: 'POST', body: form });
    expect(upload.status).toBe(422);
    expect((await json(upload, ValidationErrorSchema)).detail).toEqual([{ loc: ['query', 'path'], msg: 'File name too long', type: 'value_error' }]);
    const download = await server.app.request(`/api/file/download?path=${encodeURIComponent(path)}`);
    expect(download.status).toBe(422);
  });

  it('answers 422 for a FIFO at once, and four of them stall nothing else', async () => {
    const fifo = join(root, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const downloads = Array.from({ length: 4 }, () => within(5000, Promise.resolve(server.app.request(`/api/file/download?path=${encodeURIComponent(fifo)}`))));
    for (const response of await Promise.all(downloads)) {
      expect(response.status).toBe(422);
      expect(await json(response)).toEqual({ detail: [{ loc: ['query', 'path'], msg: 'Path is not a regular file', type: 'value_error' }] });
    }
    const bash = await within(5000, post('/api/bash/execute_bash_command', JSON.stringify({ command: 'echo still here' })));
    expect((await json(bash, BashOutputSchema)).stdout).toBe('still here\n');
  });
});

describe('request body limit', () => {
  it('answers 413 with a FastAPI body for a declared or a streamed body over the limit, and stores nothing', async () => {
    await server.close();
    server = await open({ maxRequestBodyBytes: 1024 });
    const created = (await (await post('/api/conversations', JSON.stringify(startRequest()))).json()) as { id: string };
    const big = Array.from({ length: 50 }, (_, i) => JSON.stringify({ kind: 'PauseEvent', id: `p${i}`, timestamp: '2024-01-01T00:00:00Z', source: 'user' })).join('\n');
    const declared = await server.app.request(`/api/conversations/${created.id}/events/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', 'content-length': String(Buffer.byteLength(big)) },
      body: big,
    });
    expect(declared.status).toBe(413);
    expect(await json(declared)).toEqual({ detail: 'Request body is larger than 1024 bytes' });
    const streamed = await post(`/api/conversations/${created.id}/events/import`, big, 'application/x-ndjson');
    expect(streamed.status).toBe(413);
    expect(await json(streamed)).toEqual({ detail: 'Request body is larger than 1024 bytes' });
    const jsonBody = await post('/api/bash/execute_bash_command', JSON.stringify({ command: `echo ${'x'.repeat(2000)}` }));
    expect(jsonBody.status).toBe(413);
    expect(await (await server.app.request(`/api/conversations/${created.id}/events/count`)).json()).toBe(0);
  });
});

describe('unbounded titles and event ids', () => {
  const events = (id: string) => `/api/conversations/${id}/events`;

  it('answers 422 naming the field for a 10 MB title, a 257-character event id, and stores neither', async () => {
    const huge = post('/api/conversations', JSON.stringify(startRequest({ title: 't'.repeat(10 * 1024 * 1024) })));
    const answer = await huge;
    expect(answer.status).toBe(422);
    expect((await json(answer, ValidationErrorSchema)).detail.map((d) => d.loc)).toEqual([['body', 'title']]);
    expect(await readdir(join(root, 'data', 'conversations'))).toEqual([]);

    const { id } = await json(await post('/api/conversations', JSON.stringify(startRequest({ title: 't'.repeat(500) }))), ConversationInfoSchema);
    const longId = 'e'.repeat(257);
    const imported = await post(`${events(id)}/import`, JSON.stringify([{ kind: 'MessageEvent', id: longId, source: 'user', llm_message: { role: 'user', content: [] } }]));
    expect(imported.status).toBe(422);
    expect((await json(imported, ValidationErrorSchema)).detail[0]?.loc).toContain('id');
    expect((await server.app.request(`${events(id)}/count`)).status).toBe(200);
    expect(await json(await server.app.request(`${events(id)}/count`))).toBe(0);

    const got = await server.app.request(`${events(id)}/${longId}`);
    expect(got.status).toBe(422);
    expect((await json(got, ValidationErrorSchema)).detail.map((d) => d.loc)).toEqual([['path', 'event_id']]);
    const batch = await server.app.request(`${events(id)}?event_ids=${longId}`);
    expect(batch.status).toBe(422);
    expect((await json(batch, ValidationErrorSchema)).detail[0]?.loc.slice(0, 2)).toEqual(['query', 'event_ids']);
  });
});
