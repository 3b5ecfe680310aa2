import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventSchema } from '../../../src/events/index.js';
import { textMessage, useTestAgentServer } from '../../helpers/agent-server.js';
// After the helpers: they load @hono/zod-openapi, which must extend zod before any contract is built.
import { ConversationInfoSchema } from '../../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../../src/contracts/paging.js';
import { sampleHistory } from './fixtures.js';

const agent = useTestAgentServer();

describe('a restart over the same data directory', () => {
  it('keeps conversations, their settings and their events', async () => {
    const a = await agent.server.createConversation({ title: 'A', tags: { team: 'x' }, initial_message: textMessage('hello') });
    const b = await agent.server.createConversation();
    await agent.server.callJson('POST', `/api/conversations/${b.id}/events/import`, { json: sampleHistory() });
    await agent.server.call('PATCH', `/api/conversations/${b.id}`, { json: { title: 'B' } });
    await agent.server.call('POST', `/api/conversations/${a.id}/pause`);
    const before = {
      a: (await agent.server.callJson('GET', `/api/conversations/${a.id}`)).body,
      b: (await agent.server.callJson('GET', `/api/conversations/${b.id}`)).body,
      aEvents: (await agent.server.callJson('GET', `/api/conversations/${a.id}/events/search`)).body,
      bEvents: (await agent.server.callJson('GET', `/api/conversations/${b.id}/events/search?body=fix`, {}, pageSchema(EventSchema))).body,
    };

    await agent.reopen();

    expect((await agent.server.callJson('GET', `/api/conversations/${a.id}`)).body).toEqual(before.a);
    expect((await agent.server.callJson('GET', `/api/conversations/${b.id}`)).body).toEqual(before.b);
    expect((await agent.server.callJson('GET', `/api/conversations/${a.id}/events/search`)).body).toEqual(before.aEvents);
    expect((await agent.server.callJson('GET', `/api/conversations/${b.id}/events/search?body=fix`)).body).toEqual(before.bEvents);
    expect((await agent.server.callJson('GET', '/api/conversations/count')).body).toBe(2);
    expect(before.a).toMatchObject({ title: 'A', execution_status: 'paused' });
    expect(before.bEvents.items).toHaveLength(2);

    const again = await agent.server.callJson('POST', '/api/conversations', { json: { conversation_id: a.id, agent: { llm: { model: 'm' } }, workspace: { working_dir: '/' } } });
    expect(again.status).toBe(200);
  });

  it('keeps the LLM key for the agent on disk, readable by the owner only, and still masks it', async () => {
    const created = await agent.server.createConversation({ initial_message: textMessage('hello') });
    const file = join(agent.dataDir, 'conversations', created.id, 'meta.json');
    expect(JSON.parse(await readFile(file, 'utf8')).agent.llm.api_key).toBe('sk-secret');
    expect((await stat(file)).mode & 0o077).toBe(0);
    expect((await stat(join(agent.dataDir, 'conversations', created.id, 'events.ndjson'))).mode & 0o077).toBe(0);
    await agent.reopen();
    expect((await agent.server.callJson('GET', `/api/conversations/${created.id}`, {}, ConversationInfoSchema)).body.agent.llm.api_key).toBe('**********');
  });

  it('skips a conversation whose metadata is broken, removes one without metadata, and serves the others', async () => {
    const good = await agent.server.createConversation();
    const conversations = join(agent.dataDir, 'conversations');
    const broken = randomUUID();
    const invalid = randomUUID();
    await agent.reopen(async () => {
      await mkdir(join(conversations, broken));
      await writeFile(join(conversations, broken, 'meta.json'), '{"id": "half a file');
      await mkdir(join(conversations, invalid));
      await writeFile(join(conversations, invalid, 'meta.json'), JSON.stringify({ id: invalid }));
      const unfinished = randomUUID();
      await mkdir(join(conversations, unfinished));
      await writeFile(join(conversations, unfinished, 'events.ndjson'), '');
      await mkdir(join(conversations, 'not-a-conversation'));
    });
    expect((await agent.server.callJson('GET', '/api/conversations/count')).body).toBe(1);
    expect((await readdir(conversations)).sort()).toEqual([broken, good.id, invalid, 'not-a-conversation'].sort());
    expect((await agent.server.callJson('GET', `/api/conversations/${good.id}`)).status).toBe(200);
    expect((await agent.server.callJson('GET', `/api/conversations/${broken}`)).status).toBe(404);
  });

  it('leaves nothing of a deleted conversation on disk', async () => {
    const created = await agent.server.createConversation({ initial_message: textMessage('bye') });
    await agent.server.call('DELETE', `/api/conversations/${created.id}`);
    expect(await readdir(join(agent.dataDir, 'conversations'))).toEqual([]);
    await agent.reopen();
    expect((await agent.server.callJson('GET', `/api/conversations/${created.id}`)).status).toBe(404);
  });
});
