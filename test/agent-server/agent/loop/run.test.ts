import { afterEach, describe, expect, it } from 'vitest';
import { createFinishTool, createTerminalTool, createThinkTool, type AnyTool } from '../../../../src/agent-server/agent/tools/index.js';
import { textOf } from '../../../../src/agent-server/agent/loop/llm-view.js';
import { text, toolCalls } from '../../../helpers/scripted-llm.js';
import { describedEvents, ofKind, startHarness, type Harness } from './harness.js';

let harness: Harness;
afterEach(() => harness?.close());

describe('a run of the agent loop', () => {
  it('answers a message with text: the agent message ends the run as finished', async () => {
    harness = await startHarness([text('Hello! How can I help?')]);
    const runner = await harness.runner();
    await harness.userSays('hi');
    await runner.run();

    expect(await describedEvents(harness)).toEqual([
      'MessageEvent(user)',
      'SystemPromptEvent',
      'execution_status="running"',
      'MessageEvent(agent)',
      'execution_status="finished"',
    ]);
    const events = await harness.events();
    const [systemPrompt] = ofKind(events, 'SystemPromptEvent');
    expect(systemPrompt?.source).toBe('agent');
    expect(systemPrompt?.tools.map((tool) => tool.kind)).toEqual(['ThinkTool', 'FinishTool']);
    const answer = ofKind(events, 'MessageEvent')[1];
    expect(answer?.llm_response_id).toBe('chatcmpl-1');
    expect(answer?.llm_message).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'Hello! How can I help?' }] });
    for (const update of ofKind(events, 'ConversationStateUpdateEvent')) expect(update.source).toBe('environment');
    expect(runner.executionStatus).toBe('finished');
    expect(harness.stateChanges).toEqual([
      { key: 'execution_status', value: 'running' },
      { key: 'execution_status', value: 'finished' },
    ]);

    const [request] = harness.llm.requests;
    expect(request?.body.messages).toEqual([
      { role: 'system', content: systemPrompt?.system_prompt.text },
      { role: 'user', content: 'hi' },
    ]);
    expect(request?.body.tools?.map((tool) => tool.function.name)).toEqual(['think', 'finish']);
  });

  it('does nothing on run() after finishing until the user writes again', async () => {
    harness = await startHarness([text('First answer.'), text('Second answer.')]);
    const runner = await harness.runner();
    await harness.userSays('one');
    await runner.run();
    const afterFirst = await describedEvents(harness);

    await runner.run();
    expect(await describedEvents(harness)).toEqual(afterFirst);
    expect(harness.llm.requests).toHaveLength(1);

    await harness.userSays('two');
    await runner.run();
    expect((await describedEvents(harness)).slice(afterFirst.length)).toEqual([
      'MessageEvent(user)',
      'execution_status="running"',
      'MessageEvent(agent)',
      'execution_status="finished"',
    ]);
    expect(harness.llm.requests[1]?.body.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
    ]);
  });

  it('goes on when the user writes while the agent answers, so the message is not left unanswered', async () => {
    harness = await startHarness([
      async () => {
        await harness.userSays('one more thing');
        return text('First answer.');
      },
      text('About that one more thing.'),
    ]);
    const runner = await harness.runner();
    await harness.userSays('first thing');
    await runner.run();

    expect(await describedEvents(harness)).toEqual([
      'MessageEvent(user)',
      'SystemPromptEvent',
      'execution_status="running"',
      'MessageEvent(user)',
      'MessageEvent(agent)',
      'MessageEvent(agent)',
      'execution_status="finished"',
    ]);
    expect(harness.llm.requests[1]?.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'first thing' },
      { role: 'user', content: 'one more thing' },
      { role: 'assistant', content: 'First answer.' },
    ]);
  });

  it('runs a tool call, shows the model the result, and finishes with the finish tool', async () => {
    harness = await startHarness([
      toolCalls([{ name: 'think', arguments: { thought: 'plan the work' } }], { content: 'Let me think.', reasoning_content: 'hmm' }),
      toolCalls([{ name: 'finish', arguments: { message: 'All done.' } }]),
    ]);
    const runner = await harness.runner();
    await harness.userSays('do the thing');
    await runner.run();

    expect(await describedEvents(harness)).toEqual([
      'MessageEvent(user)',
      'SystemPromptEvent',
      'execution_status="running"',
      'ActionEvent(think)',
      'ObservationEvent(think)',
      'ActionEvent(finish)',
      'ObservationEvent(finish)',
      'execution_status="finished"',
    ]);
    const events = await harness.events();
    const [think, finish] = ofKind(events, 'ActionEvent');
    const [thought, finished] = ofKind(events, 'ObservationEvent');
    expect(think).toMatchObject({
      source: 'agent',
      thought: [{ type: 'text', text: 'Let me think.' }],
      reasoning_content: 'hmm',
      action: { kind: 'ThinkAction', thought: 'plan the work' },
      tool_name: 'think',
      tool_call_id: 'call_1',
      tool_call: { id: 'call_1', name: 'think', arguments: '{"thought":"plan the work"}', origin: 'completion' },
      llm_response_id: 'chatcmpl-1',
      security_risk: 'UNKNOWN',
      summary: null,
    });
    expect(thought).toMatchObject({ source: 'environment', action_id: think?.id, tool_call_id: 'call_1', tool_name: 'think' });
    expect(finish).toMatchObject({ llm_response_id: 'chatcmpl-2', tool_call_id: 'call_2', thought: [] });
    expect(finished).toMatchObject({ action_id: finish?.id, tool_call_id: 'call_2', observation: { kind: 'FinishObservation' } });
    expect(runner.executionStatus).toBe('finished');

    expect(harness.llm.requests[1]?.body.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: 'Let me think.',
        reasoning_content: 'hmm',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'think', arguments: '{"thought":"plan the work"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: textOf(thought?.observation.content ?? []) },
    ]);
  });

  it('runs a real terminal command, keeping the security risk and summary the model gave', async () => {
    harness = await startHarness([
      toolCalls([{ name: 'terminal', arguments: { command: 'echo hi', security_risk: 'LOW', summary: 'Say hi' } }]),
      text('It printed hi.'),
    ]);
    const runner = await harness.runner({
      tools: [createTerminalTool({ workspaceDir: harness.dir }), createFinishTool()],
    });
    await harness.userSays('say hi');
    await runner.run();

    expect(await describedEvents(harness)).toEqual([
      'MessageEvent(user)',
      'SystemPromptEvent',
      'execution_status="running"',
      'ActionEvent(terminal)',
      'ObservationEvent(terminal)',
      'MessageEvent(agent)',
      'execution_status="finished"',
    ]);
    const events = await harness.events();
    const [action] = ofKind(events, 'ActionEvent');
    const [observation] = ofKind(events, 'ObservationEvent');
    expect(action).toMatchObject({ security_risk: 'LOW', summary: 'Say hi', action: { kind: 'TerminalAction', command: 'echo hi' } });
    expect(observation?.action_id).toBe(action?.id);
    expect(observation?.observation).toMatchObject({ kind: 'TerminalObservation', exit_code: 0, is_error: false });
    const toolMessage = harness.llm.requests[1]?.body.messages.at(-1);
    expect(toolMessage).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
    expect(String(toolMessage?.content)).toContain('hi');

    const terminal = harness.llm.requests[0]?.body.tools?.find((tool) => tool.function.name === 'terminal');
    expect(Object.keys(terminal?.function.parameters.properties as object)).toEqual(
      expect.arrayContaining(['command', 'security_risk', 'summary']),
    );
    const finish = harness.llm.requests[0]?.body.tools?.find((tool) => tool.function.name === 'finish');
    expect(Object.keys(finish?.function.parameters.properties as object)).not.toContain('security_risk');
  });

  it('records parallel calls with one shared llm_response_id and answers them in order', async () => {
    harness = await startHarness([
      toolCalls(
        [
          { name: 'think', arguments: { thought: 'first' } },
          { name: 'think', arguments: { thought: 'second' } },
        ],
        { content: 'Two thoughts.' },
      ),
      text('Done.'),
    ]);
    const runner = await harness.runner();
    await harness.userSays('think twice');
    await runner.run();

    expect(await describedEvents(harness)).toEqual([
      'MessageEvent(user)',
      'SystemPromptEvent',
      'execution_status="running"',
      'ActionEvent(think)',
      'ActionEvent(think)',
      'ObservationEvent(think)',
      'ObservationEvent(think)',
      'MessageEvent(agent)',
      'execution_status="finished"',
    ]);
    const events = await harness.events();
    const actions = ofKind(events, 'ActionEvent');
    const observations = ofKind(events, 'ObservationEvent');
    expect(actions.map((action) => action.llm_response_id)).toEqual(['chatcmpl-1', 'chatcmpl-1']);
    expect(actions.map((action) => action.thought.length)).toEqual([1, 0]);
    expect(observations.map((observation) => [observation.action_id, observation.tool_call_id])).toEqual(
      actions.map((action) => [action.id, action.tool_call_id]),
    );

    const messages = harness.llm.requests[1]?.body.messages ?? [];
    expect(messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    expect(messages[2]).toMatchObject({ tool_calls: [{ id: 'call_1' }, { id: 'call_2' }] });
  });

  it('answers a call to an unknown tool with an AgentErrorEvent and goes on', async () => {
    harness = await startHarness([toolCalls([{ name: 'teleport', arguments: { to: 'mars' } }]), text('Sorry, I cannot do that.')]);
    const runner = await harness.runner();
    await harness.userSays('go to mars');
    await runner.run();

    expect(await describedEvents(harness)).toEqual([
      'MessageEvent(user)',
      'SystemPromptEvent',
      'execution_status="running"',
      'ActionEvent(teleport)',
      'AgentErrorEvent(teleport)',
      'MessageEvent(agent)',
      'execution_status="finished"',
    ]);
    const events = await harness.events();
    const [action] = ofKind(events, 'ActionEvent');
    const [error] = ofKind(events, 'AgentErrorEvent');
    expect(action).toMatchObject({ action: null, tool_call_id: 'call_1', llm_response_id: 'chatcmpl-1' });
    expect(error).toMatchObject({ source: 'agent', tool_name: 'teleport', tool_call_id: 'call_1' });
    expect(error?.error).toBe('Tool "teleport" not found. Available tools: think, finish.');
    expect(harness.llm.requests[1]?.body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1', content: error?.error });
  });

  it('answers arguments the tool refuses, or that are not JSON, with AgentErrorEvents', async () => {
    harness = await startHarness([
      toolCalls([
        { name: 'think', arguments: { wrong: 1 } },
        { name: 'think', arguments: '{"thought": ' },
      ]),
      text('Let me fix that.'),
    ]);
    const runner = await harness.runner();
    await harness.userSays('think');
    await runner.run();

    expect(await describedEvents(harness)).toEqual([
      'MessageEvent(user)',
      'SystemPromptEvent',
      'execution_status="running"',
      'ActionEvent(think)',
      'AgentErrorEvent(think)',
      'ActionEvent(think)',
      'AgentErrorEvent(think)',
      'MessageEvent(agent)',
      'execution_status="finished"',
    ]);
    const errors = ofKind(await harness.events(), 'AgentErrorEvent');
    expect(errors.map((error) => error.tool_call_id)).toEqual(['call_1', 'call_2']);
    expect(errors[0]?.error).toMatch(/^Invalid arguments for tool "think"/);
    expect(errors[1]?.error).toBe('Invalid arguments for tool "think": expected a JSON object.');
    // Broken JSON is kept in the event but sent back to the model as an empty object.
    const assistant = harness.llm.requests[1]?.body.messages[2];
    expect(assistant).toMatchObject({ tool_calls: [{ function: { arguments: '{"wrong":1}' } }, { function: { arguments: '{}' } }] });
  });

  it('answers a tool that throws with an AgentErrorEvent', async () => {
    const broken: AnyTool = { ...createThinkTool(), execute: () => Promise.reject(new Error('disk on fire')) };
    harness = await startHarness([toolCalls([{ name: 'think', arguments: { thought: 'x' } }]), text('That failed.')]);
    const runner = await harness.runner({ tools: [broken] });
    await harness.userSays('think');
    await runner.run();

    const [error] = ofKind(await harness.events(), 'AgentErrorEvent');
    expect(error).toMatchObject({ tool_name: 'think', tool_call_id: 'call_1', error: 'Error executing tool "think": disk on fire' });
    expect(runner.executionStatus).toBe('finished');
  });

  it('drops the calls after finish: the run ends there', async () => {
    harness = await startHarness([
      toolCalls([
        { name: 'finish', arguments: { message: 'done' } },
        { name: 'think', arguments: { thought: 'too late' } },
      ]),
    ]);
    const runner = await harness.runner();
    await harness.userSays('finish');
    await runner.run();
    expect((await describedEvents(harness)).slice(3)).toEqual([
      'ActionEvent(finish)',
      'ObservationEvent(finish)',
      'execution_status="finished"',
    ]);
  });

  it('tells the model to go on after an empty response', async () => {
    harness = await startHarness([{ reply: { content: null } }, text('Here I am.')]);
    const runner = await harness.runner();
    await harness.userSays('hello?');
    await runner.run();

    expect((await describedEvents(harness)).slice(3)).toEqual([
      'MessageEvent(agent)',
      'MessageEvent(environment)',
      'MessageEvent(agent)',
      'execution_status="finished"',
    ]);
    expect(harness.llm.requests[1]?.body.messages.slice(2).map((message) => message.role)).toEqual(['assistant', 'user']);
  });

  it('returns the running loop when run() is called again', async () => {
    harness = await startHarness([text('Once.')]);
    const runner = await harness.runner();
    await harness.userSays('hi');
    const first = runner.run();
    expect(runner.run()).toBe(first);
    await first;
    expect(harness.llm.requests).toHaveLength(1);
  });

  it('records a confirmation policy change as a state update', async () => {
    harness = await startHarness([]);
    const runner = await harness.runner();
    await runner.setConfirmationPolicy({ kind: 'ConfirmRisky' });

    const [update] = ofKind(await harness.events(), 'ConversationStateUpdateEvent');
    const policy = { kind: 'ConfirmRisky', threshold: 'HIGH', confirm_unknown: true };
    expect(update).toMatchObject({ key: 'confirmation_policy', value: policy });
    expect(runner.confirmationPolicy).toEqual(policy);
    expect(harness.stateChanges).toEqual([{ key: 'confirmation_policy', value: policy }]);
  });
});
