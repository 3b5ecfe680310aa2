/**
 * generate_title and the ACP-capable conversation routes (/api/acp/conversations) over raw HTTP,
 * with conversations made through the published client. The client at 1.39.0 no longer calls
 * either, so these check the wire shapes its older versions (and OpenHands' suite) rely on.
 */
import { join } from 'node:path';
import { Agent, ConversationManager, type RemoteConversation } from '@openhands/typescript-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startListeningAgentServer, type ListeningAgentServer } from '../../helpers/agent-server.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { startScriptedLlm, text, type ScriptedLlm } from '../../helpers/scripted-llm.js';
import { ConversationInfoSchema, ConversationPageSchema } from '../../../src/contracts/agent-server/conversation-info.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

let agent: ListeningAgentServer;
let llm: ScriptedLlm;
let other: ScriptedLlm;
let manager: ConversationManager;

beforeAll(async () => {
  agent = await startListeningAgentServer();
  llm = await startScriptedLlm([
    text('  🐛 Fix the flaky login test  '),
    text('A title far longer than the twenty characters asked for'),
    { status: 400, body: { error: { message: 'bad request', type: 'invalid_request_error' } } },
  ]);
  other = await startScriptedLlm([text('From the other model')]);
  manager = new ConversationManager({ host: agent.url, apiKey: agent.key });
});
afterAll(async () => {
  manager.close();
  await other.close();
  await llm.close();
  await agent.close();
});

function llmConfig(baseUrl: string) {
  return { model: 'openai/scripted', api_key: 'sk-test', base_url: baseUrl, num_retries: 0 };
}

const call: ListeningAgentServer['call'] = (method, path, body, schema) => agent.call(method, path, body, schema);

async function conversationWith(message?: string): Promise<RemoteConversation> {
  const conversation = await manager.createConversation(new Agent({ llm: llmConfig(llm.baseUrl) }), { workingDir: agent.workspaceDir });
  if (message !== undefined) await conversation.sendMessage(message);
  return conversation;
}

describe('generate_title', () => {
  it("asks the conversation's LLM about the first user message, clips the answer to max_length, and stores nothing", async () => {
    const conversation = await conversationWith('The login test fails one run in ten, please fix it');
    await conversation.sendMessage('A second message that must not be the subject');

    const first = await call('POST', `/api/conversations/${conversation.id}/generate_title`, { max_length: 50 });
    expect(first).toEqual({ status: 200, body: { title: '🐛 Fix the flaky login test' } });
    const prompt = llm.requests.at(-1)!.body.messages;
    expect(prompt.map((message) => message.role)).toEqual(['system', 'user']);
    expect(JSON.stringify(prompt[1]!.content)).toContain('The login test fails one run in ten, please fix it');
    expect(JSON.stringify(prompt[1]!.content)).not.toContain('A second message');
    expect(llm.requests.at(-1)!.body.tools ?? []).toEqual([]);

    const clipped = await call('POST', `/api/conversations/${conversation.id}/generate_title`, { max_length: 20 });
    expect(clipped).toEqual({ status: 200, body: { title: 'A title far longe...' } });

    expect((await manager.getConversation(conversation.id)).title ?? null).toBeNull();
  });

  it('falls back to the first user message, clipped, when the LLM fails', async () => {
    const conversation = await conversationWith('Rename every variable called tmp in src/ to something meaningful');
    const answer = await call('POST', `/api/conversations/${conversation.id}/generate_title`, { max_length: 30 });
    expect(answer).toEqual({ status: 200, body: { title: 'Rename every variable calle...' } });
    expect(llm.remaining()).toBe(0);
  });

  it('asks the LLM given in the request instead of the conversation’s', async () => {
    const conversation = await conversationWith('Anything');
    const before = llm.requests.length;
    const answer = await call('POST', `/api/conversations/${conversation.id}/generate_title`, { llm: llmConfig(other.baseUrl) });
    expect(answer).toEqual({ status: 200, body: { title: 'From the other model' } });
    expect(other.requests).toHaveLength(1);
    expect(llm.requests).toHaveLength(before);
  });

  it('is a 409 without a user message, a 404 for an unknown conversation, a 422 for a bad max_length', async () => {
    const empty = await conversationWith();
    expect(await call('POST', `/api/conversations/${empty.id}/generate_title`, {})).toEqual({
      status: 409,
      body: { detail: 'The conversation has no user message to title it by' },
    });
    expect((await call('POST', `/api/conversations/${UNKNOWN_ID}/generate_title`, {})).status).toBe(404);
    for (const max_length of [0, 201, 'ten']) {
      const answer = await call('POST', `/api/conversations/${empty.id}/generate_title`, { max_length }, ValidationErrorSchema);
      expect(answer.status).toBe(422);
      expect(answer.body.detail[0]?.loc).toContain('max_length');
    }
  });
});

describe('/api/acp/conversations', () => {
  it('starts, gets, batch-gets, counts and searches the same conversations as /api/conversations', async () => {
    const countBefore = (await call('GET', '/api/acp/conversations/count', undefined, z.number())).body;
    const started = await call(
      'POST',
      '/api/acp/conversations',
      { agent: { kind: 'Agent', llm: llmConfig(llm.baseUrl) }, workspace: { working_dir: agent.workspaceDir }, tags: { origin: 'acp' } },
      ConversationInfoSchema,
    );
    expect(started.status).toBe(201);
    const id = started.body.id;
    expect(started.body).toMatchObject({ agent: { kind: 'Agent' }, execution_status: 'idle', tags: { origin: 'acp' } });

    expect(await call('GET', `/api/acp/conversations/${id}`)).toEqual({ status: 200, body: started.body });
    expect((await call('GET', `/api/conversations/${id}`)).body).toEqual(started.body);
    expect(await call('GET', `/api/acp/conversations?ids=${id}&ids=${UNKNOWN_ID}`)).toEqual({ status: 200, body: [started.body, null] });
    expect(await call('GET', '/api/acp/conversations/count')).toEqual({ status: 200, body: countBefore + 1 });
    expect((await call('GET', '/api/acp/conversations/count?status=idle')).body).toBe((await call('GET', '/api/conversations/count?status=idle')).body);
    const search = await call('GET', '/api/acp/conversations/search?limit=100&sort_order=CREATED_AT_DESC', undefined, ConversationPageSchema);
    expect(search.status).toBe(200);
    expect(search.body.items[0]).toEqual(started.body);
    expect(search.body).toEqual((await call('GET', '/api/conversations/search?limit=100&sort_order=CREATED_AT_DESC')).body);

    const again = await call('POST', '/api/acp/conversations', {
      conversation_id: id,
      agent: { kind: 'Agent', llm: llmConfig(llm.baseUrl) },
      workspace: { working_dir: agent.workspaceDir },
    });
    expect(again).toEqual({ status: 200, body: started.body });
  });

  it('refuses an ACPAgent on both start routes, and answers unknown ids and bad queries as /api/conversations does', async () => {
    const acpAgent = { kind: 'ACPAgent', acp_command: ['npx', '-y', 'claude-agent-acp'], llm: llmConfig(llm.baseUrl) };
    for (const path of ['/api/acp/conversations', '/api/conversations']) {
      const answer = await call('POST', path, { agent: acpAgent, workspace: { working_dir: agent.workspaceDir } }, ValidationErrorSchema);
      expect(answer.status).toBe(422);
      expect(answer.body.detail[0]).toMatchObject({ loc: ['body', 'agent', 'kind'] });
    }
    expect(await call('GET', `/api/acp/conversations/${UNKNOWN_ID}`)).toEqual({ status: 404, body: { detail: 'Not Found' } });
    expect((await call('GET', '/api/acp/conversations/not-a-uuid')).status).toBe(422);
    expect((await call('GET', '/api/acp/conversations/search?limit=0')).status).toBe(422);
    const tooMany = Array.from({ length: 101 }, () => `ids=${UNKNOWN_ID}`).join('&');
    expect((await call('GET', `/api/acp/conversations?${tooMany}`)).status).toBe(400);
  });
});
