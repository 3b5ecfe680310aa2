import { afterEach, describe, expect, it } from 'vitest';
import { createTaskTrackerTool, createThinkTool } from '../../../../src/agent-server/agent/tools/index.js';
import type { AgentRunner } from '../../../../src/agent-server/agent/index.js';
import { text, toolCalls } from '../../../helpers/scripted-llm.js';
import { describedEvents, ofKind, startHarness, type Harness } from './harness.js';

let harness: Harness;
afterEach(() => harness?.close());

const TWO_THOUGHTS = toolCalls([
  { name: 'think', arguments: { thought: 'a' } },
  { name: 'think', arguments: { thought: 'b' } },
]);

describe('confirmation mode', () => {
  it('records the actions but waits for the user before running them', async () => {
    harness = await startHarness([TWO_THOUGHTS]);
    const runner = await harness.runner({ confirmationPolicy: { kind: 'AlwaysConfirm' } });
    await harness.userSays('think twice');
    await runner.run();

    expect(await describedEvents(harness)).toEqual([
      'MessageEvent(user)',
      'SystemPromptEvent',
      'execution_status="running"',
      'ActionEvent(think)',
      'ActionEvent(think)',
      'execution_status="waiting_for_confirmation"',
    ]);
    expect(runner.executionStatus).toBe('waiting_for_confirmation');
  });

  it('runs the waiting actions when the user accepts, then goes on', async () => {
    harness = await startHarness([TWO_THOUGHTS, text('Thought it through.')]);
    const runner = await harness.runner({ confirmationPolicy: { kind: 'AlwaysConfirm' } });
    await harness.userSays('think twice');
    await runner.run();
    await runner.respondToConfirmation({ accept: true });

    expect((await describedEvents(harness)).slice(5)).toEqual([
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
    expect(harness.llm.requests).toHaveLength(2);
  });

  it('records a UserRejectObservation per waiting action when the user rejects; the next run shows the model', async () => {
    harness = await startHarness([TWO_THOUGHTS, text('Understood, I will not.')]);
    const runner = await harness.runner({ confirmationPolicy: { kind: 'AlwaysConfirm' } });
    await harness.userSays('think twice');
    await runner.run();
    await runner.respondToConfirmation({ accept: false, reason: 'not now' });

    expect((await describedEvents(harness)).slice(5)).toEqual([
      'execution_status="waiting_for_confirmation"',
      'UserRejectObservation(think)',
      'UserRejectObservation(think)',
      'execution_status="idle"',
    ]);
    const events = await harness.events();
    const actions = ofKind(events, 'ActionEvent');
    const rejections = ofKind(events, 'UserRejectObservation');
    expect(rejections.map((rejection) => [rejection.action_id, rejection.tool_call_id])).toEqual(
      actions.map((action) => [action.id, action.tool_call_id]),
    );
    for (const rejection of rejections) {
      expect(rejection).toMatchObject({ source: 'environment', rejection_source: 'user', rejection_reason: 'not now' });
    }
    expect(runner.executionStatus).toBe('idle');
    expect(harness.llm.requests).toHaveLength(1);

    await runner.run();
    expect(harness.llm.requests[1]?.body.messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'Action rejected: not now' },
      { role: 'tool', tool_call_id: 'call_2', content: 'Action rejected: not now' },
    ]);
    expect(runner.executionStatus).toBe('finished');
  });

  it("uses OpenHands' default reason when the user gives none", async () => {
    harness = await startHarness([TWO_THOUGHTS]);
    const runner = await harness.runner({ confirmationPolicy: { kind: 'AlwaysConfirm' } });
    await harness.userSays('think twice');
    await runner.run();
    await runner.respondToConfirmation({ accept: false });

    const rejections = ofKind(await harness.events(), 'UserRejectObservation');
    expect(rejections.map((rejection) => rejection.rejection_reason)).toEqual(['User rejected the action', 'User rejected the action']);
  });

  it('never waits for a lone think or finish', async () => {
    harness = await startHarness([toolCalls([{ name: 'think', arguments: { thought: 'quietly' } }]), text('Done.')]);
    const runner = await harness.runner({ confirmationPolicy: { kind: 'AlwaysConfirm' } });
    await harness.userSays('think');
    await runner.run();

    expect(runner.executionStatus).toBe('finished');
    expect(ofKind(await harness.events(), 'ObservationEvent')).toHaveLength(1);
  });

  it('with ConfirmRisky, waits only for actions at or above the threshold', async () => {
    const plan = (risk: string) =>
      toolCalls([
        { name: 'task_tracker', arguments: { command: 'view', security_risk: risk } },
        { name: 'think', arguments: { thought: 'then this' } },
      ]);
    harness = await startHarness([plan('MEDIUM'), plan('HIGH')]);
    const runner = await harness.runner({
      tools: [createTaskTrackerTool(), createThinkTool()],
      confirmationPolicy: { kind: 'ConfirmRisky', threshold: 'HIGH', confirm_unknown: false },
    });
    await harness.userSays('look at the plan');
    await runner.run();

    expect((await describedEvents(harness)).slice(3)).toEqual([
      'ActionEvent(task_tracker)',
      'ActionEvent(think)',
      'ObservationEvent(task_tracker)',
      'ObservationEvent(think)',
      'ActionEvent(task_tracker)',
      'ActionEvent(think)',
      'execution_status="waiting_for_confirmation"',
    ]);
    expect(ofKind(await harness.events(), 'ActionEvent').map((action) => action.security_risk)).toEqual([
      'MEDIUM',
      'UNKNOWN',
      'HIGH',
      'UNKNOWN',
    ]);
  });

  it('with ConfirmRisky, waits for UNKNOWN risks unless told not to; a new policy applies to the next response', async () => {
    let runner: AgentRunner | undefined;
    harness = await startHarness([
      TWO_THOUGHTS,
      async () => {
        await runner?.setConfirmationPolicy({ kind: 'ConfirmRisky' });
        return TWO_THOUGHTS;
      },
    ]);
    runner = await harness.runner({ confirmationPolicy: { kind: 'ConfirmRisky', confirm_unknown: false } });
    await harness.userSays('think twice, twice');
    await runner.run();

    expect((await describedEvents(harness)).slice(3)).toEqual([
      'ActionEvent(think)',
      'ActionEvent(think)',
      'ObservationEvent(think)',
      'ObservationEvent(think)',
      'confirmation_policy={"kind":"ConfirmRisky","threshold":"HIGH","confirm_unknown":true}',
      'ActionEvent(think)',
      'ActionEvent(think)',
      'execution_status="waiting_for_confirmation"',
    ]);
  });
});
