import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRunner } from '../../../../src/agent-server/agent/index.js';
import { createThinkTool } from '../../../../src/agent-server/agent/tools/index.js';
import { text, toolCalls } from '../../../helpers/scripted-llm.js';
import { createGateTool, describedEvents, ofKind, startHarness, type Harness } from './harness.js';

let harness: Harness;
afterEach(() => harness?.close());

describe('pausing the agent loop', () => {
  it('abandons an LLM call in flight, records the pause, and asks again on the next run', async () => {
    let runner: AgentRunner | undefined;
    let paused: Promise<void> | undefined;
    harness = await startHarness([
      () => {
        paused = runner?.pause();
        return { hang: true };
      },
      text('Here is my answer.'),
    ]);
    runner = await harness.runner();
    await harness.userSays('hi');
    await runner.run();
    await paused;

    expect(await describedEvents(harness)).toEqual([
      'MessageEvent(user)',
      'SystemPromptEvent',
      'execution_status="running"',
      'PauseEvent',
      'execution_status="paused"',
    ]);
    expect(ofKind(await harness.events(), 'PauseEvent')[0]?.source).toBe('user');
    expect(runner.executionStatus).toBe('paused');

    await runner.run();
    expect((await describedEvents(harness)).slice(5)).toEqual([
      'execution_status="running"',
      'MessageEvent(agent)',
      'execution_status="finished"',
    ]);
    expect(harness.llm.requests[1]?.body.messages).toEqual(harness.llm.requests[0]?.body.messages);
  });

  it('lets the running tool finish, leaves the next action pending, and runs it first on resume', async () => {
    const gate = createGateTool();
    harness = await startHarness([
      toolCalls([
        { name: 'gate', arguments: { thought: 'slow' } },
        { name: 'think', arguments: { thought: 'next' } },
      ]),
      text('Both done.'),
    ]);
    const runner = await harness.runner({ tools: [gate.tool, createThinkTool()] });
    await harness.userSays('go');
    const running = runner.run();
    await gate.started;
    const paused = runner.pause();
    gate.release();
    await Promise.all([running, paused]);

    expect((await describedEvents(harness)).slice(3)).toEqual([
      'ActionEvent(gate)',
      'ActionEvent(think)',
      'ObservationEvent(gate)',
      'PauseEvent',
      'execution_status="paused"',
    ]);
    expect(harness.llm.requests).toHaveLength(1);

    await runner.run();
    expect((await describedEvents(harness)).slice(8)).toEqual([
      'execution_status="running"',
      'ObservationEvent(think)',
      'MessageEvent(agent)',
      'execution_status="finished"',
    ]);
    const events = await harness.events();
    expect(ofKind(events, 'ObservationEvent')[1]?.action_id).toBe(ofKind(events, 'ActionEvent')[1]?.id);
  });

  it('pauses an idle conversation at once and ignores a second pause', async () => {
    harness = await startHarness([]);
    const runner = await harness.runner();
    await runner.pause();
    await runner.pause();

    expect(await describedEvents(harness)).toEqual(['PauseEvent', 'execution_status="paused"']);
    expect(harness.stateChanges).toEqual([{ key: 'execution_status', value: 'paused' }]);
  });

  it('does not pause a finished conversation', async () => {
    harness = await startHarness([text('Done.')]);
    const runner = await harness.runner();
    await harness.userSays('hi');
    await runner.run();
    const before = await describedEvents(harness);
    await runner.pause();

    expect(await describedEvents(harness)).toEqual(before);
    expect(runner.executionStatus).toBe('finished');
  });
});
