import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { startRequest, textMessage, useTestAgentServer } from '../../helpers/agent-server.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { ConversationInfoSchema } from '../../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../../src/contracts/paging.js';
import { EventSchema } from '../../../src/events/index.js';
import { type ScriptedLlm, startScriptedLlm, toolCalls } from '../../helpers/scripted-llm.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

const STATIC_VALUE = 'tok-Static-8c1f0e27';
const LOOKED_UP_VALUE = 'tok-Looked-5d93aa41';
const ROTATED_VALUE = 'tok-Rotated-77b2c6d0';

/** Conversation secrets reach the agent's shell as variables and are masked in all that leaves it. */
describe('conversation secrets', () => {
  let workspace: string;
  let llm: ScriptedLlm | undefined;
  let lookup: Server;
  let lookupUrl: string;
  const lookupHeaders: string[] = [];

  beforeEach(async () => {
    workspace = await makeTempDir('secrets-workspace-');
    lookup = createServer((request, response) => {
      lookupHeaders.push(String(request.headers['x-vault-token']));
      response.end(LOOKED_UP_VALUE);
    });
    await new Promise<void>((resolve) => lookup.listen(0, '127.0.0.1', resolve));
    lookupUrl = `http://127.0.0.1:${(lookup.address() as AddressInfo).port}/secret`;
  });
  afterEach(async () => {
    await llm?.close();
    llm = undefined;
    await new Promise((resolve) => lookup.close(resolve));
    await removeDir(workspace);
  });
  const agent = useTestAgentServer({ tempPrefix: 'secrets-http-' });

  async function statusBecomes(id: string, status: string) {
    await vi.waitFor(
      async () => expect((await agent.server.callJson('GET', `/api/conversations/${id}`, {}, ConversationInfoSchema)).body.execution_status).toBe(status),
      { timeout: 20_000, interval: 25 },
    );
  }

  async function observations(id: string) {
    const page = await agent.server.callJson('GET', `/api/conversations/${id}/events/search?limit=100&kind=ObservationEvent`, {}, pageSchema(EventSchema));
    return page.body.items.filter((event) => event.kind === 'ObservationEvent' && event.tool_name === 'terminal').map((event) => JSON.stringify(event));
  }

  it('sets static and looked-up secrets in the shell and masks them in observations, events and the LLM requests', async () => {
    llm = await startScriptedLlm([
      toolCalls([{ name: 'terminal', arguments: { command: 'echo "static=$API_TOKEN looked=$DB_PASSWORD"' } }]),
      toolCalls([{ name: 'terminal', arguments: { command: `test "$API_TOKEN" = '${'tok-Static-'}'"8c1f0e27" && echo same-value` } }]),
      toolCalls([{ name: 'finish', arguments: { message: 'done' } }]),
    ]);
    const created = await agent.server.createConversation(
      startRequest({
        agent: { kind: 'Agent', llm: { model: 'scripted', base_url: llm.baseUrl, api_key: 'sk-test' } },
        workspace: { working_dir: workspace },
        secrets: {
          API_TOKEN: STATIC_VALUE,
          DB_PASSWORD: { kind: 'LookupSecret', url: lookupUrl, headers: { 'X-Vault-Token': 'vault-header' }, description: 'the database password' },
        },
        initial_message: { ...textMessage('Print the secrets'), run: true },
      }),
    );
    await statusBecomes(created.id, 'finished');

    const [printed, compared] = await observations(created.id);
    expect(printed).toContain('static=<secret_hidden> looked=<secret_hidden>');
    // The shell holds the real value: the comparison, written without it, succeeds.
    expect(compared).toContain('same-value');
    expect(lookupHeaders[0]).toBe('vault-header');

    const bodies = llm.requests.map((request) => JSON.stringify(request.body));
    expect(bodies[1]).toContain('static=<secret_hidden> looked=<secret_hidden>');
    // The agent is told the secrets' names (and descriptions), never their values.
    expect(bodies[0]).toContain('API_TOKEN');
    expect(bodies[0]).toContain('the database password');
    const exported = await (await agent.server.call('GET', `/api/conversations/${created.id}/events/export`)).text();
    const info = await (await agent.server.call('GET', `/api/conversations/${created.id}`)).text();
    for (const text of [...bodies, exported, info]) {
      expect(text).not.toContain(STATIC_VALUE);
      expect(text).not.toContain(LOOKED_UP_VALUE);
    }
  });

  it('gives the running shell secrets replaced mid-conversation, masking the old and the new value', async () => {
    llm = await startScriptedLlm([
      toolCalls([{ name: 'terminal', arguments: { command: 'echo "first=$API_TOKEN"' } }]),
      toolCalls([{ name: 'finish', arguments: { message: 'done' } }]),
      toolCalls([{ name: 'terminal', arguments: { command: 'echo "second=$API_TOKEN" && echo "${#API_TOKEN}"' } }]),
      toolCalls([{ name: 'finish', arguments: { message: 'done again' } }]),
    ]);
    const created = await agent.server.createConversation(
      startRequest({
        agent: { kind: 'Agent', llm: { model: 'scripted', base_url: llm.baseUrl, api_key: 'sk-test' } },
        workspace: { working_dir: workspace },
        secrets: { API_TOKEN: { kind: 'StaticSecret', value: STATIC_VALUE } },
        initial_message: { ...textMessage('Print it'), run: true },
      }),
    );
    await statusBecomes(created.id, 'finished');
    const updated = await agent.server.callJson('POST', `/api/conversations/${created.id}/secrets`, { json: { secrets: { API_TOKEN: ROTATED_VALUE } } });
    expect(updated.status).toBe(200);
    await agent.server.callJson('POST', `/api/conversations/${created.id}/events`, { json: { ...textMessage('Again'), run: true } });
    await statusBecomes(created.id, 'finished');

    const [first, second] = await observations(created.id);
    expect(first).toContain('first=<secret_hidden>');
    expect(second).toContain('second=<secret_hidden>');
    expect(second).toContain(String(ROTATED_VALUE.length));
    const exported = await (await agent.server.call('GET', `/api/conversations/${created.id}/events/export`)).text();
    expect(exported).not.toContain(STATIC_VALUE);
    expect(exported).not.toContain(ROTATED_VALUE);
  });

  it('refuses a secret of an unknown kind or a lookup without a usable URL with a 422', async () => {
    for (const secret of [{ kind: 'VaultSecret', path: 'x' }, { kind: 'LookupSecret', url: 'file:///etc/passwd' }]) {
      const answer = await agent.server.callJson('POST', '/api/conversations', { json: startRequest({ secrets: { A: secret } }) }, ValidationErrorSchema);
      expect(answer.status).toBe(422);
      expect(answer.body.detail[0]?.loc.slice(0, 3)).toEqual(['body', 'secrets', 'A']);
    }
    const created = await agent.server.createConversation(startRequest());
    const answer = await agent.server.callJson('POST', `/api/conversations/${created.id}/secrets`, { json: { secrets: { A: 42 } } }, ValidationErrorSchema);
    expect(answer.status).toBe(422);
    expect(z.array(z.unknown()).parse(answer.body.detail).length).toBeGreaterThan(0);
  });
});
