import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startRequest, textMessage, useTestAgentServer } from '../../helpers/agent-server.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { ConversationInfoSchema } from '../../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../../src/contracts/paging.js';
import { EventSchema } from '../../../src/events/index.js';
import { ServerInfoSchema } from '../../../src/contracts/agent-server/server-info.js';
import { type ScriptedLlm, startScriptedLlm, text, toolCalls } from '../../helpers/scripted-llm.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

/** The agent loop driven through the agent-server's HTTP routes, against a scripted LLM. */
describe('running the agent over HTTP', () => {
  let workspace: string;
  let llm: ScriptedLlm | undefined;

  beforeEach(async () => {
    workspace = await makeTempDir('agent-loop-workspace-');
  });
  afterEach(async () => {
    await llm?.close();
    await removeDir(workspace);
  });
  // Registered after the hooks above, so the server closes before the scripted LLM it may be calling.
  const agent = useTestAgentServer({ tempPrefix: 'agent-loop-http-' });

  async function conversationWith(script: Parameters<typeof startScriptedLlm>[0], overrides: Record<string, unknown> = {}) {
    llm = await startScriptedLlm(script);
    return agent.server.createConversation(
      startRequest({
        agent: { kind: 'Agent', llm: { model: 'scripted', base_url: llm.baseUrl, api_key: 'sk-test' } },
        workspace: { working_dir: workspace },
        ...overrides,
      }),
    );
  }

  async function statusBecomes(id: string, status: string) {
    await vi.waitFor(
      async () => expect((await agent.server.callJson('GET', `/api/conversations/${id}`, {}, ConversationInfoSchema)).body.execution_status).toBe(status),
      { timeout: 15_000, interval: 25 },
    );
  }

  async function events(id: string, query = '') {
    return (await agent.server.callJson('GET', `/api/conversations/${id}/events/search?limit=100${query}`, {}, pageSchema(EventSchema))).body.items;
  }

  it('runs a message through the LLM and real tools until the agent finishes', async () => {
    const created = await conversationWith(
      [
        toolCalls([{ name: 'terminal', arguments: { command: 'echo hello > note.txt && cat note.txt' } }]),
        toolCalls([{ name: 'finish', arguments: { message: 'Wrote note.txt' } }]),
      ],
      { initial_message: { ...textMessage('Write a note'), run: true } },
    );
    await statusBecomes(created.id, 'finished');

    const all = await events(created.id);
    const kinds = all.filter((e) => e.kind !== 'ConversationStateUpdateEvent').map((e) => `${e.kind}:${e.source}`);
    expect(kinds).toEqual([
      'MessageEvent:user',
      'SystemPromptEvent:agent',
      'ActionEvent:agent',
      'ObservationEvent:environment',
      'ActionEvent:agent',
      'ObservationEvent:environment',
    ]);
    const actions = all.filter((e) => e.kind === 'ActionEvent');
    const results = all.filter((e) => e.kind === 'ObservationEvent');
    const [terminalAction, finishAction] = actions;
    const [terminalResult, finishResult] = results;
    expect(terminalAction).toMatchObject({ tool_name: 'terminal', action: { kind: 'TerminalAction' } });
    expect(terminalResult).toMatchObject({ action_id: terminalAction?.id, tool_call_id: terminalAction?.tool_call_id });
    expect(JSON.stringify(terminalResult?.observation.content)).toContain('hello');
    expect(finishResult).toMatchObject({ action_id: finishAction?.id, observation: { kind: 'FinishObservation' } });
    const statuses = all.flatMap((e) => (e.kind === 'ConversationStateUpdateEvent' && e.key === 'execution_status' ? [e.value] : []));
    expect(statuses).toEqual(['running', 'finished']);
    expect(llm?.requests).toHaveLength(2);
  });

  it('reports no idle time while its agent runs, however long a command takes without events', async () => {
    const gate = join(workspace, 'go');
    const created = await conversationWith(
      [
        toolCalls([{ name: 'terminal', arguments: { command: `while [ ! -e ${gate} ]; do sleep 0.05; done; echo through` } }]),
        toolCalls([{ name: 'finish', arguments: { message: 'Waited' } }]),
      ],
      { initial_message: { ...textMessage('Wait for the gate'), run: true } },
    );
    await vi.waitFor(async () => expect((await events(created.id)).some((e) => e.kind === 'ActionEvent')).toBe(true), { timeout: 15_000, interval: 25 });
    const idleTime = async () => (await agent.server.callJson('GET', '/server_info', {}, ServerInfoSchema)).body.idle_time;
    // Long enough without a change that a server going by changes alone would call itself idle.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await idleTime()).toBe(0);

    await writeFile(gate, '');
    await statusBecomes(created.id, 'finished');
    expect(await idleTime()).toBeGreaterThan(0);
  });

  it('waits for confirmation and records a rejection', async () => {
    const created = await conversationWith([toolCalls([{ name: 'terminal', arguments: { command: 'rm -rf build' } }])], {
      confirmation_policy: { kind: 'AlwaysConfirm' },
    });
    await agent.server.call('POST', `/api/conversations/${created.id}/events`, { json: { ...textMessage('Clean up'), run: true } });
    await statusBecomes(created.id, 'waiting_for_confirmation');

    const answer = await agent.server.callJson('POST', `/api/conversations/${created.id}/events/respond_to_confirmation`, {
      json: { accept: false, reason: 'Not that directory' },
    });
    expect(answer).toEqual({ status: 200, body: { success: true } });
    await vi.waitFor(async () => expect(await events(created.id, '&kind=UserRejectObservation')).toHaveLength(1));
    const [action] = await events(created.id, '&kind=ActionEvent');
    const [rejection] = await events(created.id, '&kind=UserRejectObservation');
    expect(rejection).toMatchObject({ action_id: action?.id, rejection_reason: 'Not that directory', rejection_source: 'user' });
    expect(await events(created.id, '&kind=ObservationEvent')).toEqual([]);
  });

  it('changes the confirmation policy and validates it', async () => {
    const created = await conversationWith([text('ok')]);
    const path = `/api/conversations/${created.id}/confirmation_policy`;
    expect(await agent.server.callJson('POST', path, { json: { policy: { kind: 'AlwaysConfirm' } } })).toEqual({ status: 200, body: { success: true } });
    await vi.waitFor(async () =>
      expect((await agent.server.callJson('GET', `/api/conversations/${created.id}`, {}, ConversationInfoSchema)).body.confirmation_policy).toEqual({ kind: 'AlwaysConfirm' }),
    );
    const bad = await agent.server.callJson('POST', path, { json: { policy: { kind: 'Sometimes' } } }, ValidationErrorSchema);
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]?.loc.slice(0, 3)).toEqual(['body', 'policy', 'kind']);
  });

  it('records a ConversationErrorEvent when the LLM keeps failing, and keeps serving', async () => {
    const created = await conversationWith(
      [{ status: 401, body: { error: { message: 'bad key' } } }],
      { initial_message: { ...textMessage('hi'), run: true } },
    );
    await statusBecomes(created.id, 'error');
    const [error] = await events(created.id, '&kind=ConversationErrorEvent');
    expect(error).toMatchObject({ source: 'environment', code: 'LLMAuthenticationError' });
    expect(JSON.stringify(error)).not.toContain('sk-test');
    expect((await agent.server.callJson('GET', '/api/conversations/count')).body).toBe(1);
  });

  it('keeps the agent plan across a restart of the agent-server', async () => {
    const plan = [{ title: 'Write tests', notes: '', status: 'in_progress' }];
    const created = await conversationWith(
      [
        toolCalls([{ name: 'task_tracker', arguments: { command: 'plan', task_list: plan } }]),
        toolCalls([{ name: 'finish', arguments: { message: 'planned' } }]),
        toolCalls([{ name: 'task_tracker', arguments: { command: 'view' } }]),
        toolCalls([{ name: 'finish', arguments: { message: 'viewed' } }]),
      ],
      { initial_message: { ...textMessage('Plan it'), run: true } },
    );
    await statusBecomes(created.id, 'finished');
    await agent.reopen();
    await agent.server.call('POST', `/api/conversations/${created.id}/events`, { json: { ...textMessage('Show the plan'), run: true } });
    await vi.waitFor(async () => expect(await events(created.id, '&kind=ObservationEvent')).toHaveLength(4), { timeout: 15_000 });
    const observations = (await events(created.id, '&kind=ObservationEvent')).flatMap((e) =>
      e.kind === 'ObservationEvent' && e.observation.kind === 'TaskTrackerObservation' ? [e.observation] : [],
    );
    expect(observations.map((o) => o.command)).toEqual(['plan', 'view']);
    expect(observations[1]?.task_list).toEqual(plan);
  });
});
