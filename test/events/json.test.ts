import { describe, expect, it } from 'vitest';
import { EventSchema, isJsonValue } from '../../src/events/index.js';

const cyclic: Record<string, unknown> = {};
cyclic['self'] = cyclic;
const shared = { a: 1 };

const json: Array<[string, unknown]> = [
  ['null', null],
  ['a string', 'running'],
  ['a number', -2.5],
  ['a boolean', false],
  ['an array', [1, 'a', null, [true]]],
  ['a nested object', { a: { b: [{ c: null }] } }],
  ['an object without prototype', Object.assign(Object.create(null) as object, { a: 1 })],
  ['the same object twice, not cyclic', { x: shared, y: shared }],
];

const notJson: Array<[string, unknown]> = [
  ['undefined', undefined],
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['a function', () => 1],
  ['a Date', new Date(0)],
  ['a Map', new Map()],
  ['a bigint', 1n],
  ['a nested undefined', { a: [undefined] }],
  ['a cycle', cyclic],
];

describe('isJsonValue', () => {
  it.each(json)('accepts %s', (_name, value) => {
    expect(isJsonValue(value)).toBe(true);
  });

  it.each(notJson)('refuses %s', (_name, value) => {
    expect(isJsonValue(value)).toBe(false);
  });
});

describe('free-form JSON fields', () => {
  it.each(json.slice(0, 6))('ConversationStateUpdateEvent.value takes %s', (_name, value) => {
    expect(EventSchema.parse({ kind: 'ConversationStateUpdateEvent', key: 'k', value })).toMatchObject({ value });
  });

  it.each(notJson.slice(1))('ConversationStateUpdateEvent.value refuses %s', (_name, value) => {
    expect(EventSchema.safeParse({ kind: 'ConversationStateUpdateEvent', value }).success).toBe(false);
  });

  it('free-form objects take any key but refuse values JSON cannot carry', () => {
    const action = (data: unknown) => ({
      kind: 'ActionEvent',
      thought: [],
      tool_name: 'fetch',
      tool_call_id: 'c',
      tool_call: { id: 'c', name: 'fetch', arguments: '{}', origin: 'completion' },
      llm_response_id: 'r',
      action: { kind: 'MCPToolAction', data },
    });
    expect(EventSchema.safeParse(action({ anything: { goes: [1] } })).success).toBe(true);
    expect(EventSchema.safeParse(action({ when: new Date(0) })).success).toBe(false);
    expect(EventSchema.safeParse(action(['not', 'an', 'object'])).success).toBe(false);
  });
});
