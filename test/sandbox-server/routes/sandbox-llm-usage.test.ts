import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '../../../src/sandbox-server/db/client.js';
import { AppConversationSchema, AppConversationStartTaskSchema } from '../../../src/sandbox-server/models/app-conversation.js';
import { SandboxLlmUsageSchema } from '../../../src/sandbox-server/models/llm-usage.js';
import { ErrorDetailSchema } from '../../helpers/answer.js';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';
import { type ScriptedLlm, startScriptedLlm, text } from '../../helpers/scripted-llm.js';
import { type Harness, openHarness, SERVER_LLM_KEY } from '../app-conversations/harness.js';

const OWN_KEY = 'sk-own-key-of-one-conversation';
const message = (words: string) => ({ role: 'user', content: [{ type: 'text', text: words }], run: true });

/**
 * Conversations started through the API call their LLM through the real relay (the harness's
 * agent-server reaches it on loopback): the LLM sees the real key, the agent-server holds a relay
 * token, and GET /api/v1/sandboxes/{id}/llm-usage shows what the relay counted.
 */
describe.each(testDrivers)('LLM usage through the relay (%s)', (driver) => {
  let handle: DatabaseHandle;
  let llm: ScriptedLlm;
  let h: Harness;

  beforeAll(async () => {
    handle = await openTestDatabase(driver);
    llm = await startScriptedLlm([], { responder: () => text('Done.', { usage: { prompt_tokens: 40, completion_tokens: 4 } }) });
    h = await openHarness(handle, { llmBaseUrl: llm.baseUrl });
  });
  afterAll(async () => {
    await h?.close();
    await llm?.close();
    await handle?.close();
  });

  async function finishedConversation(body: Record<string, unknown>) {
    const ready = await h.request('POST', '/api/v1/app-conversations?wait=true', body, AppConversationSchema);
    expect(ready.status).toBe(200);
    await vi.waitFor(async () => expect((await h.request('GET', `/api/v1/app-conversations/${ready.body.id}`, undefined, AppConversationSchema)).body.execution_status).toBe('finished'), {
      timeout: 15_000,
    });
    return ready.body;
  }

  it("counts each conversation's calls and tokens, and sends the server's key or the conversation's own, never to the agent", async () => {
    const first = await finishedConversation({ initial_message: message('hello') });
    const second = await finishedConversation({ sandbox_id: first.sandbox_id, initial_message: message('again'), llm_api_key: OWN_KEY });

    expect(llm.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${SERVER_LLM_KEY}`, `Bearer ${OWN_KEY}`]);
    const usage = await h.request('GET', `/api/v1/sandboxes/${first.sandbox_id}/llm-usage`, undefined, SandboxLlmUsageSchema);
    expect(usage).toEqual({
      status: 200,
      body: {
        sandbox_id: first.sandbox_id,
        calls: 2,
        input_tokens: 80,
        output_tokens: 8,
        conversations: [
          { conversation_id: first.id, calls: 1, input_tokens: 40, output_tokens: 4 },
          { conversation_id: second.id, calls: 1, input_tokens: 40, output_tokens: 4 },
        ],
      },
    });

    // The agent-server keeps a relay token and the relay's address, and the task shows no key back.
    const info = await h.request('GET', `/api/v1/sandboxes/${first.sandbox_id}/agent/api/conversations/${second.id}`);
    const shown = JSON.stringify(info.body);
    expect(shown).not.toContain(OWN_KEY);
    expect(shown).not.toContain(SERVER_LLM_KEY);
    const tasks = await h.request('GET', '/api/v1/app-conversations/start-tasks/search');
    expect(JSON.stringify(tasks.body)).not.toContain(OWN_KEY);
  });

  it('answers 404 for an unknown sandbox and 401 without a key', async () => {
    expect(await h.request('GET', '/api/v1/sandboxes/no-such-sandbox/llm-usage', undefined, ErrorDetailSchema)).toEqual({ status: 404, body: { detail: 'Sandbox not found' } });
    const anonymous = await fetch(`${h.url}/api/v1/sandboxes/no-such-sandbox/llm-usage`);
    expect(anonymous.status).toBe(401);
  });

  it('keeps the own key out of the start task it shows', async () => {
    const task = await h.request('POST', '/api/v1/app-conversations', { initial_message: message('hi'), llm_api_key: OWN_KEY }, AppConversationStartTaskSchema);
    expect(task.status).toBe(200);
    expect(JSON.stringify(task.body)).not.toContain(OWN_KEY);
  });
});
