import { afterEach, describe, expect, it } from 'vitest';
import { text, toolCalls } from '../../../helpers/scripted-llm.js';
import { API_KEY, describedEvents, ofKind, startHarness, type Harness } from './harness.js';

let harness: Harness;
afterEach(() => harness?.close());

const THINK = toolCalls([{ name: 'think', arguments: { thought: 'again' } }]);

describe('when the agent loop cannot go on', () => {
  it('records a ConversationErrorEvent and status error when the LLM still fails after its retries', async () => {
    harness = await startHarness([{ status: 503 }, { status: 503 }, text('Back again.')]);
    const runner = await harness.runner();
    await harness.userSays('hi');
    await expect(runner.run()).resolves.toBeUndefined();

    expect(await describedEvents(harness)).toEqual([
      'MessageEvent(user)',
      'SystemPromptEvent',
      'execution_status="running"',
      'ConversationErrorEvent(LLMServiceUnavailableError)',
      'execution_status="error"',
    ]);
    const [error] = ofKind(await harness.events(), 'ConversationErrorEvent');
    expect(error?.source).toBe('environment');
    expect(error?.detail).toMatch(/^LLM API answered 503.*gave up after 2 attempts/);
    expect(runner.executionStatus).toBe('error');
    expect(harness.llm.requests).toHaveLength(2);

    // Nothing is lost, and a new run starts over from there.
    await runner.run();
    expect((await describedEvents(harness)).slice(5)).toEqual([
      'execution_status="running"',
      'MessageEvent(agent)',
      'execution_status="finished"',
    ]);
  });

  it('keeps the api key out of the error even when the server echoes it', async () => {
    harness = await startHarness([{ status: 401, body: { error: { message: `invalid key ${API_KEY}` } } }]);
    const runner = await harness.runner();
    await harness.userSays('hi');
    await runner.run();

    const [error] = ofKind(await harness.events(), 'ConversationErrorEvent');
    expect(error?.code).toBe('LLMAuthenticationError');
    expect(error?.detail).toContain('[redacted]');
    expect(JSON.stringify(await harness.events())).not.toContain(API_KEY);
  });

  it('stops with MaxIterationsReached after maxIterations LLM steps in one run', async () => {
    harness = await startHarness([THINK, THINK, THINK, THINK]);
    const runner = await harness.runner({ maxIterations: 2 });
    await harness.userSays('think forever');
    await runner.run();

    expect((await describedEvents(harness)).slice(3)).toEqual([
      'ActionEvent(think)',
      'ObservationEvent(think)',
      'ActionEvent(think)',
      'ObservationEvent(think)',
      'ConversationErrorEvent(MaxIterationsReached)',
      'execution_status="error"',
    ]);
    const [error] = ofKind(await harness.events(), 'ConversationErrorEvent');
    expect(error).toMatchObject({ source: 'environment', detail: 'Agent reached maximum iterations limit (2).' });
    expect(harness.llm.requests).toHaveLength(2);

    // A new run has its own budget.
    await harness.userSays('one more');
    const before = (await harness.events()).length;
    await runner.run();
    expect((await describedEvents(harness)).slice(before)).toEqual([
      'execution_status="running"',
      'ActionEvent(think)',
      'ObservationEvent(think)',
      'ActionEvent(think)',
      'ObservationEvent(think)',
      'ConversationErrorEvent(MaxIterationsReached)',
      'execution_status="error"',
    ]);
  });

  it('keeps finished when the agent finishes on its last allowed step', async () => {
    harness = await startHarness([text('Done in one.')]);
    const runner = await harness.runner({ maxIterations: 1 });
    await harness.userSays('hi');
    await runner.run();

    expect(runner.executionStatus).toBe('finished');
    expect(ofKind(await harness.events(), 'ConversationErrorEvent')).toEqual([]);
  });
});
