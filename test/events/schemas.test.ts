import { describe, expect, it } from 'vitest';
import {
  ActionEventSchema,
  EventSchema,
  ObservationEventSchema,
  SystemPromptEventSchema,
} from '../../src/events/index.js';
import {
  actionCases,
  eventCases,
  fullEvents,
  observationCases,
  supportingCases,
  toolCases,
  type Case,
} from './cases.js';

const groups: Array<[string, Case[]]> = [
  ['event', eventCases],
  ['action', actionCases],
  ['observation', observationCases],
  ['tool definition', toolCases],
  ['supporting type', supportingCases],
];

function expectedOutput(c: Case): Record<string, unknown> {
  const envelope = c.schema === EventSchema ? { id: expect.any(String), timestamp: expect.any(String) } : {};
  return { ...envelope, ...c.input, ...c.defaults };
}

function expectRoundTrip(schema: Case['schema'], output: unknown): void {
  expect(schema.parse(output)).toEqual(output);
  expect(JSON.parse(JSON.stringify(output))).toEqual(output);
}

describe.each(groups)('every %s schema', (_group, cases) => {
  it.each(cases.map((c) => [c.name, c] as const))('%s: fills every default of a minimal input', (_name, c) => {
    expect(c.schema.parse(c.input)).toEqual(expectedOutput(c));
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s: round-trips through parse and JSON', (_name, c) => {
    expectRoundTrip(c.schema, c.schema.parse(c.input));
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s: refuses an unknown field', (_name, c) => {
    const result = c.schema.safeParse({ ...c.input, unexpected: true });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain('unexpected');
  });

  const missing = cases.flatMap((c) => Object.keys(c.input).map((field) => [c.name, field, c] as const));
  it.each(missing)('%s: refuses the input without %s', (_name, field, c) => {
    const input = { ...c.input };
    delete input[field];
    expect(c.schema.safeParse(input).success).toBe(false);
  });
});

describe('fully populated events', () => {
  it.each(fullEvents.map((e, i) => [`${e.kind} #${i}`, e] as const))('%s round-trips unchanged', (_name, event) => {
    const output = EventSchema.parse(event);
    expectRoundTrip(EventSchema, output);
    expect(output).toMatchObject(event);
  });
});

/** Where a nested strict object sits inside the fully populated events above. */
const nestedObjects: Array<[number, Array<string | number>]> = [
  [0, ['thought', 0]],
  [0, ['thinking_blocks', 0]],
  [0, ['thinking_blocks', 1]],
  [0, ['responses_reasoning_item']],
  [0, ['action']],
  [0, ['tool_call']],
  [0, ['critic_result']],
  [1, ['llm_message']],
  [1, ['llm_message', 'content', 0]],
  [1, ['llm_message', 'content', 1]],
  [1, ['llm_message', 'tool_calls', 0]],
  [1, ['llm_message', 'thinking_blocks', 0]],
  [1, ['llm_message', 'responses_reasoning_item']],
  [1, ['extended_content', 0]],
  [2, ['system_prompt']],
  [2, ['dynamic_context']],
  [2, ['tools', 0]],
  [2, ['tools', 0, 'annotations']],
  [2, ['tools', 1, 'mcp_tool']],
  [2, ['tools', 1, 'mcp_tool', 'annotations']],
  [2, ['tools', 1, 'mcp_tool', 'icons', 0]],
  [2, ['tools', 1, 'mcp_tool', 'execution']],
  [3, ['observation']],
  [3, ['observation', 'content', 0]],
  [3, ['observation', 'metadata']],
  [4, ['observation', 'entries', 0]],
  [5, ['observation', 'task_list', 0]],
];

describe('nested objects', () => {
  it.each(nestedObjects.map(([i, path]) => [fullEvents[i]?.kind, path.join('.'), i, path] as const))(
    '%s refuses an unknown field in %s',
    (_kind, _path, index, path) => {
      const event: unknown = structuredClone(fullEvents[index]);
      const target = path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], event);
      expect(target).toBeTypeOf('object');
      (target as Record<string, unknown>)['unexpected'] = true;
      expect(EventSchema.safeParse(event).success).toBe(false);
    },
  );
});

describe('the kind unions inside events', () => {
  const actionEvent = {
    thought: [],
    tool_name: 't',
    tool_call_id: 'c',
    tool_call: { id: 'c', name: 't', arguments: '{}', origin: 'completion' },
    llm_response_id: 'r',
  };

  it.each(actionCases.map((c) => [c.name, c] as const))('ActionEvent.action takes %s', (_name, c) => {
    expect(ActionEventSchema.parse({ kind: 'ActionEvent', ...actionEvent, action: c.input }).action).toEqual(
      expectedOutput(c),
    );
  });

  it.each(observationCases.map((c) => [c.name, c] as const))('ObservationEvent.observation takes %s', (_name, c) => {
    const event = { kind: 'ObservationEvent', tool_name: 't', tool_call_id: 'c', action_id: 'a', observation: c.input };
    expect(ObservationEventSchema.parse(event).observation).toEqual(expectedOutput(c));
  });

  it.each(toolCases.map((c) => [c.name, c] as const))('SystemPromptEvent.tools takes %s', (_name, c) => {
    const event = { kind: 'SystemPromptEvent', system_prompt: { text: 's' }, tools: [c.input] };
    expect(SystemPromptEventSchema.parse(event).tools).toEqual([expectedOutput(c)]);
  });

  it.each([
    ['action', { kind: 'ActionEvent', ...actionEvent, action: { kind: 'ExecuteBashAction', command: 'ls' } }],
    ['observation', { kind: 'ObservationEvent', tool_name: 't', tool_call_id: 'c', action_id: 'a', observation: {} }],
    ['tool', { kind: 'SystemPromptEvent', system_prompt: { text: 's' }, tools: [{ kind: 'BashTool' }] }],
  ])('refuses an unknown or missing %s kind', (_what, event) => {
    expect(EventSchema.safeParse(event).success).toBe(false);
  });
});
