import { describe, expect, it } from 'vitest';
import { detectStuck } from '../../../../src/agent-server/agent/loop/stuck-detection.js';
import { ActionEventSchema, type ActionEvent, type Event } from '../../../../src/events/index.js';
import { agentError, agentMessage, observation, systemPrompt, userMessage } from './event-builders.js';

let next = 0;
function run(command: string, args: Record<string, unknown> = {}): ActionEvent {
  const n = ++next;
  return ActionEventSchema.parse({
    kind: 'ActionEvent',
    id: `action-${n}`,
    thought: [],
    action: { kind: 'ThinkAction', thought: command },
    tool_name: 'terminal',
    tool_call_id: `call-${n}`,
    tool_call: { id: `call-${n}`, name: 'terminal', arguments: JSON.stringify({ command, ...args }), origin: 'completion' },
    llm_response_id: `response-${n}`,
  });
}

/** The action and its result. */
function step(command: string, result: string, args: Record<string, unknown> = {}): Event[] {
  const action = run(command, args);
  return [action, observation(`result-${action.id}`, action, result)];
}

function failing(command: string, error: string): Event[] {
  const action = run(command);
  return [action, agentError(`error-${action.id}`, action.tool_call_id, error)];
}

const start: Event[] = [systemPrompt(), userMessage('task', 'fix the build')];

describe('detectStuck', () => {
  it('sees the same action with the same result four times, whatever the ids or key order', () => {
    const three = [...step('ls', 'a b'), ...step('ls', 'a b', { summary: 'list' }), ...step('ls', 'a b')];
    expect(detectStuck([...start, ...three])).toBeNull();
    expect(detectStuck([...start, ...three, ...step('ls', 'a b')])).toBe('repeating_action_observation');
    expect(detectStuck([...start, ...three, ...step('ls', 'a b c')])).toBeNull();
  });

  it('sees the same failing action three times', () => {
    const two = [...failing('make', 'no rule'), ...failing('make', 'no rule')];
    expect(detectStuck([...start, ...two])).toBeNull();
    expect(detectStuck([...start, ...two, ...failing('make', 'no rule')])).toBe('repeating_action_error');
  });

  it('sees three agent messages in a row', () => {
    const messages = [agentMessage('m1', 'hm', 'r1'), agentMessage('m2', 'hm', 'r2')];
    expect(detectStuck([...start, ...messages])).toBeNull();
    expect(detectStuck([...start, ...messages, agentMessage('m3', 'hm', 'r3')])).toBe('monologue');
  });

  it('sees two actions alternating with the same results', () => {
    const pair = () => [...step('cat a', 'A'), ...step('cat b', 'B')];
    const five = [...pair(), ...pair(), ...step('cat a', 'A')];
    expect(detectStuck([...start, ...five])).toBeNull();
    expect(detectStuck([...start, ...five, ...step('cat b', 'B')])).toBe('alternating_action_observation');
  });

  it('starts counting again when the user writes', () => {
    const loop = [...step('ls', 'x'), ...step('ls', 'x'), ...step('ls', 'x'), ...step('ls', 'x')];
    expect(detectStuck([...start, ...loop])).toBe('repeating_action_observation');
    expect(detectStuck([...start, ...loop, userMessage('again', 'try once more')])).toBeNull();
  });
});
