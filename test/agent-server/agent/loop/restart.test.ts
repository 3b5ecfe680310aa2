import { afterEach, describe, expect, it } from 'vitest';
import { createThinkTool } from '../../../../src/agent-server/agent/tools/index.js';
import { text, toolCalls } from '../../../helpers/scripted-llm.js';
import { createGateTool, describedEvents, ofKind, startHarness, type Harness } from './harness.js';

let harness: Harness;
afterEach(() => harness?.close());

describe('a runner created over an existing log', () => {
  it('finds the actions waiting for confirmation and runs them when the user accepts', async () => {
    harness = await startHarness([
      toolCalls([
        { name: 'think', arguments: { thought: 'a' } },
        { name: 'think', arguments: { thought: 'b' } },
      ]),
      text('Done after the restart.'),
    ]);
    const before = await harness.runner({ confirmationPolicy: { kind: 'AlwaysConfirm' } });
    await harness.userSays('think twice');
    await before.run();
    await before.close();

    const after = await harness.runner({ confirmationPolicy: { kind: 'AlwaysConfirm' } });
    expect(after.executionStatus).toBe('waiting_for_confirmation');
    await after.respondToConfirmation({ accept: true });

    expect(await describedEvents(harness)).toEqual([
      'MessageEvent(user)',
      'SystemPromptEvent',
      'execution_status="running"',
      'ActionEvent(think)',
      'ActionEvent(think)',
      'execution_status="waiting_for_confirmation"',
      'execution_status="running"',
      'ObservationEvent(think)',
      'ObservationEvent(think)',
      'MessageEvent(agent)',
      'execution_status="finished"',
    ]);
    const events = await harness.events();
    expect(ofKind(events, 'ObservationEvent').map((observation) => observation.action_id)).toEqual(
      ofKind(events, 'ActionEvent').map((action) => action.id),
    );
  });

  it('resumes a run cut short mid-step: the unfinished actions run, and the run keeps its iteration count', async () => {
    const gate = createGateTool();
    harness = await startHarness([
      toolCalls([
        { name: 'gate', arguments: { thought: 'interrupted' } },
        { name: 'think', arguments: { thought: 'never started' } },
      ]),
      toolCalls([{ name: 'think', arguments: { thought: 'after the restart' } }]),
      text('never asked'),
    ]);
    const before = await harness.runner({ tools: [gate.tool, createThinkTool()], maxIterations: 2 });
    await harness.userSays('go');
    const running = before.run();
    await gate.started;
    // Closing stands in for the process going away: the interrupted tool's result is not recorded.
    await before.close();
    await running;
    expect((await describedEvents(harness)).slice(2)).toEqual(['execution_status="running"', 'ActionEvent(gate)', 'ActionEvent(think)']);

    const openGate = createGateTool();
    openGate.release();
    const after = await harness.runner({ tools: [openGate.tool, createThinkTool()], maxIterations: 2 });
    expect(after.executionStatus).toBe('running');
    await after.run();

    expect((await describedEvents(harness)).slice(5)).toEqual([
      'ObservationEvent(gate)',
      'ObservationEvent(think)',
      'ActionEvent(think)',
      'ObservationEvent(think)',
      'ConversationErrorEvent(MaxIterationsReached)',
      'execution_status="error"',
    ]);
    expect(ofKind(await harness.events(), 'SystemPromptEvent')).toHaveLength(1);
    expect(harness.llm.requests).toHaveLength(2);
  });
});
