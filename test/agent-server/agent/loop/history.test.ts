import { afterEach, describe, expect, it } from 'vitest';
import { text, toolCalls } from '../../../helpers/scripted-llm.js';
import { API_KEY, MODEL, describedEvents, ofKind, startHarness, type Harness } from './harness.js';

let harness: Harness;
afterEach(() => harness?.close());

const think = (thought: string) => toolCalls([{ name: 'think', arguments: { thought } }]);

describe('what the loop keeps of its LLM calls', () => {
  it('records an LLMCompletionLogEvent before the events of each response when logCompletions is on', async () => {
    harness = await startHarness([think('first'), text('Done.')]);
    const runner = await harness.runner({ logCompletions: true });
    await harness.userSays('go');
    await runner.run();

    expect((await describedEvents(harness)).slice(3)).toEqual([
      'LLMCompletionLogEvent',
      'ActionEvent(think)',
      'ObservationEvent(think)',
      'LLMCompletionLogEvent',
      'MessageEvent(agent)',
      'execution_status="finished"',
    ]);
    const events = await harness.events();
    const logs = ofKind(events, 'LLMCompletionLogEvent');
    for (const log of logs) {
      expect(log).toMatchObject({ source: 'environment', model_name: MODEL, usage_id: 'default' });
      expect(log.filename).toMatch(/^test-model-\d+\.\d{3}-[0-9a-f]{4}\.json$/);
    }
    const data = JSON.parse(logs[0]?.log_data ?? '') as { messages: unknown[]; tools: unknown[]; response: { id: string } };
    expect(data.messages).toEqual(harness.llm.requests[0]?.body.messages);
    expect(data.tools).toEqual(harness.llm.requests[0]?.body.tools);
    expect(data.response.id).toBe('chatcmpl-1');
    expect(JSON.stringify(events)).not.toContain(API_KEY);
  });

  it('records no completion logs by default', async () => {
    harness = await startHarness([text('Done.')]);
    const runner = await harness.runner();
    await harness.userSays('go');
    await runner.run();
    expect(ofKind(await harness.events(), 'LLMCompletionLogEvent')).toEqual([]);
  });

  it('condenses a long view: the middle is summarized by the LLM, the log keeps everything', async () => {
    harness = await startHarness([
      think('one'),
      think('two'),
      think('three'),
      think('four'),
      think('five'),
      text('SUMMARY: thought one to four.'),
      text('Done.'),
    ]);
    const runner = await harness.runner({ condenser: { maxEvents: 10, keepFirst: 2 } });
    await harness.userSays('think a lot');
    await runner.run();

    const events = await harness.events();
    const actions = ofKind(events, 'ActionEvent');
    const observations = ofKind(events, 'ObservationEvent');
    expect(actions).toHaveLength(5);
    expect((await describedEvents(harness)).slice(-4)).toEqual([
      'ObservationEvent(think)',
      'Condensation',
      'MessageEvent(agent)',
      'execution_status="finished"',
    ]);
    const [condensation] = ofKind(events, 'Condensation');
    expect(condensation).toMatchObject({
      source: 'environment',
      summary: 'SUMMARY: thought one to four.',
      summary_offset: 2,
      llm_response_id: 'chatcmpl-6',
    });
    expect(condensation?.forgotten_event_ids).toEqual(
      actions.slice(0, 4).flatMap((action, index) => [action.id, observations[index]?.id]),
    );

    const summaryRequest = harness.llm.requests[5]?.body;
    expect(summaryRequest?.tools).toBeUndefined();
    expect(summaryRequest?.messages).toHaveLength(1);
    const prompt = String(summaryRequest?.messages[0]?.content);
    for (const thought of ['one', 'two', 'three', 'four']) expect(prompt).toContain(`{"thought":"${thought}"}`);
    expect(prompt).not.toContain('{"thought":"five"}');

    const after = harness.llm.requests[6]?.body.messages ?? [];
    expect(after.map((message) => message.role)).toEqual(['system', 'user', 'user', 'assistant', 'tool']);
    expect(after[1]).toEqual({ role: 'user', content: 'think a lot' });
    expect(after[2]).toEqual({ role: 'user', content: 'SUMMARY: thought one to four.' });
    expect(after[3]).toMatchObject({ tool_calls: [{ id: 'call_5' }] });
  });
});
