/**
 * agent_final_response, ask_agent, fork, switch_profile, secrets, the trajectory download, the
 * PATCH title rules and unknown ids, through the published client and over raw HTTP.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { inflateRawSync } from 'node:zlib';
import { join } from 'node:path';
import { Agent, ConversationManager, HttpError, type RemoteConversation } from '@openhands/typescript-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startListeningAgentServer, type ListeningAgentServer } from '../../helpers/agent-server.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { startScriptedLlm, text, toolCalls, type ScriptedLlm } from '../../helpers/scripted-llm.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

let agent: ListeningAgentServer;
let llm: ScriptedLlm;
let manager: ConversationManager;

beforeAll(async () => {
  agent = await startListeningAgentServer();
  llm = await startScriptedLlm([
    toolCalls([{ name: 'finish', arguments: { message: 'All done: 42' } }]),
    (request) => text(`You asked: ${JSON.stringify(request.body.messages.at(-1)?.content)}`),
  ]);
  manager = new ConversationManager({ host: agent.url, apiKey: agent.key });
});
afterAll(async () => {
  manager.close();
  await llm.close();
  await agent.close();
});

function newAgent(): Agent {
  return new Agent({ llm: { model: 'openai/scripted', api_key: 'sk-test', base_url: llm.baseUrl } });
}

const call: ListeningAgentServer['call'] = (method, path, body, schema) => agent.call(method, path, body, schema);

async function finished(conversation: RemoteConversation): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    if ((await conversation.state.getExecutionStatus()) === 'finished') return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the conversation did not finish');
}

/** The entries of a ZIP, read back through its central directory. */
function unzip(archive: Buffer): Map<string, string> {
  const entries = new Map<string, string>();
  const end = archive.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  let offset = archive.readUInt32LE(end + 16);
  for (let i = 0; i < archive.readUInt16LE(end + 10); i++) {
    const size = archive.readUInt32LE(offset + 20);
    const nameLength = archive.readUInt16LE(offset + 28);
    const local = archive.readUInt32LE(offset + 42);
    const name = archive.toString('utf8', offset + 46, offset + 46 + nameLength);
    const dataStart = local + 30 + archive.readUInt16LE(local + 26);
    entries.set(name, inflateRawSync(archive.subarray(dataStart, dataStart + size)).toString('utf8'));
    offset += 46 + nameLength;
  }
  return entries;
}

describe('conversation extras', () => {
  it("answers the agent's final response, '' before it answered, and a side question without recording it", async () => {
    const conversation = await manager.createConversation(newAgent(), { workingDir: agent.workspaceDir });
    expect(await conversation.getAgentFinalResponse()).toBe('');
    await conversation.sendMessage('Finish please');
    await conversation.run();
    await finished(conversation);
    expect(await conversation.getAgentFinalResponse()).toBe('All done: 42');

    const count = await conversation.state.events.count();
    expect(await conversation.askAgent('What is 2 + 2?')).toBe('You asked: "What is 2 + 2?"');
    expect(await conversation.state.events.count()).toBe(count);
    expect(llm.requests.at(-1)!.body.tools).toBeUndefined();
  });

  it('forks a conversation with its history, under a new or the requested id, 409 when taken', async () => {
    const source = await manager.createConversation(newAgent(), { workingDir: agent.workspaceDir });
    await source.sendMessage('remember me');
    const fork = await source.fork({ title: '  Forked  ', tags: { env: 'test' } });
    expect(fork.id).not.toBe(source.id);
    const info = await manager.getConversation(fork.id);
    expect(info).toMatchObject({ title: 'Forked', tags: { env: 'test' }, execution_status: 'idle' });
    const copied = await fork.state.events.search({ limit: 10 });
    expect(copied.items.map((event) => event.id)).toEqual((await source.state.events.search({ limit: 10 })).items.map((event) => event.id));

    const wanted = '11111111-1111-4111-8111-111111111111';
    expect((await call('POST', `/api/conversations/${source.id}/fork`, { id: wanted })).status).toBe(201);
    expect(await call('POST', `/api/conversations/${source.id}/fork`, { id: wanted })).toEqual({
      status: 409,
      body: { detail: `Conversation ${wanted} already exists` },
    });
    expect((await call('POST', `/api/conversations/${UNKNOWN_ID}/fork`, {})).status).toBe(404);
  });

  it('stores secrets, and answers 404 for a profile it does not have', async () => {
    const conversation = await manager.createConversation(newAgent(), { workingDir: agent.workspaceDir });
    await conversation.updateSecrets({ TOKEN: 'abc', OTHER: () => 'def' });
    expect(agent.server.ctx.conversations.find(conversation.id)!.metadata.secrets).toEqual({
      TOKEN: { kind: 'StaticSecret', value: 'abc' },
      OTHER: { kind: 'StaticSecret', value: 'def' },
    });
    expect(JSON.stringify(await manager.getConversation(conversation.id))).not.toContain('abc');

    const error = await conversation.switchProfile('fast').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HttpError);
    expect(await call('POST', `/api/conversations/${conversation.id}/switch_profile`, { profile_name: 'fast' })).toEqual({
      status: 404,
      body: { detail: "Profile 'fast' not found" },
    });
    expect((await call('POST', `/api/conversations/${conversation.id}/secrets`, { secrets: 'nope' })).status).toBe(422);
  });

  it('downloads the trajectory as a ZIP of the settings (keys masked) and every event, never a ZIP found on disk', async () => {
    const conversation = await manager.createConversation(newAgent(), { workingDir: agent.workspaceDir });
    await conversation.sendMessage('zip me');
    // Where OpenHands' agent-servers put, and old ones returned as found, `<id hex>.zip`.
    for (const dir of [join(agent.root, 'data', 'conversations'), join(agent.root, 'workspace', 'conversations')]) {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, `${conversation.id.replace(/-/g, '')}.zip`), 'planted-trajectory');
    }
    const archive = Buffer.from(await (await conversation.downloadTrajectory()).arrayBuffer());
    expect(archive.subarray(0, 4)).toEqual(Buffer.from([0x50, 0x4b, 0x03, 0x04]));
    const folder = conversation.id.replace(/-/g, '');
    const entries = unzip(archive);
    expect([...entries.keys()]).toEqual([`${folder}/meta.json`, `${folder}/events.ndjson`]);
    expect(JSON.parse(entries.get(`${folder}/meta.json`)!)).toMatchObject({ id: conversation.id, agent: { llm: { api_key: '**********' } } });
    expect(entries.get(`${folder}/events.ndjson`)).toContain('zip me');
    expect(archive.includes('planted-trajectory')).toBe(false);
    expect((await call('GET', `/api/file/download-trajectory/${UNKNOWN_ID}`)).status).toBe(404);
  });

  it('answers a batch of events by id, null for unknown ones, 400 past 100 ids', async () => {
    const conversation = await manager.createConversation(newAgent(), { workingDir: agent.workspaceDir });
    await conversation.sendMessage('batch me');
    const [event] = (await conversation.state.events.search({ limit: 1 })).items;
    const base = `/api/conversations/${conversation.id}/events`;
    expect(await call('GET', `${base}?event_ids=${event!.id}&event_ids=nope`)).toEqual({ status: 200, body: [event, null] });
    const tooMany = Array.from({ length: 101 }, (_, i) => `event_ids=e${i}`).join('&');
    expect(await call('GET', `${base}?${tooMany}`)).toEqual({ status: 400, body: { detail: 'Cannot request more than 100 events at once, got 101' } });
    expect((await call('GET', base)).status).toBe(422);
    expect((await call('GET', `/api/conversations/${UNKNOWN_ID}/events?event_ids=x`)).status).toBe(404);
  });

  it('strips titles and takes 1 to 200 characters', async () => {
    const conversation = await manager.createConversation(newAgent(), { workingDir: agent.workspaceDir });
    await manager.updateConversation(conversation.id, { title: '  Tidy  ' });
    expect((await manager.getConversation(conversation.id)).title).toBe('Tidy');
    for (const title of ['', '   ', 'x'.repeat(201)]) {
      const { status, body } = await call('PATCH', `/api/conversations/${conversation.id}`, { title }, ValidationErrorSchema);
      expect(status, JSON.stringify(title)).toBe(422);
      expect(body.detail[0]?.loc).toEqual(['body', 'title']);
    }
    expect((await call('PATCH', `/api/conversations/${conversation.id}`, { title: 'x'.repeat(200) })).status).toBe(200);
  });

  it('answers unknown ids as documented: the generic Not Found for reads, 404 for changes', async () => {
    expect(await call('GET', `/api/conversations/${UNKNOWN_ID}`)).toEqual({ status: 404, body: { detail: 'Not Found' } });
    expect(await call('GET', `/api/conversations/${UNKNOWN_ID}/events/e1`)).toEqual({ status: 404, body: { detail: 'Not Found' } });
    expect(await call('GET', `/api/conversations/${UNKNOWN_ID}/events/search`)).toEqual({ status: 404, body: { detail: 'Conversation not found' } });
    for (const [method, path, body] of [
      ['PATCH', '', { title: 'x' }],
      ['DELETE', '', undefined],
      ['POST', '/pause', undefined],
      ['GET', '/agent_final_response', undefined],
      ['POST', '/ask_agent', { question: 'hi' }],
      ['POST', '/secrets', { secrets: {} }],
    ] as const) {
      expect(await call(method, `/api/conversations/${UNKNOWN_ID}${path}`, body), `${method} ${path}`).toEqual({
        status: 404,
        body: { detail: 'Conversation not found' },
      });
    }
  });
});
