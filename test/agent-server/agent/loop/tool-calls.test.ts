import { describe, expect, it } from 'vitest';
import { chatTools, eventsFromToolCalls } from '../../../../src/agent-server/agent/loop/tool-calls.js';
import type { LlmResponse } from '../../../../src/agent-server/agent/llm/index.js';
import { createFinishTool, createTaskTrackerTool, createThinkTool, type AnyTool } from '../../../../src/agent-server/agent/tools/index.js';

const tools = new Map<string, AnyTool>([createTaskTrackerTool(), createThinkTool(), createFinishTool()].map((tool) => [tool.name, tool]));

function response(calls: { name: string; arguments: string }[], content: string | null = null): LlmResponse {
  return {
    id: 'resp-1',
    model: 'm',
    content,
    tool_calls: calls.map((call, i) => ({ id: `call_${i + 1}`, origin: 'completion', ...call })),
    reasoning_content: 'thinking aloud',
    thinking_blocks: [],
    responses_reasoning_item: null,
    finish_reason: 'tool_calls',
    usage: null,
    raw: {},
  };
}

describe('the tools offered to the LLM', () => {
  it('adds security_risk to tools that change things and summary to all, keeping the tool\'s own schema', () => {
    const [tracker, think] = chatTools([...tools.values()]);
    const trackerParameters = tracker?.function.parameters as { properties: Record<string, unknown>; additionalProperties?: unknown };
    expect(Object.keys(trackerParameters.properties)).toEqual(['command', 'task_list', 'security_risk', 'summary']);
    expect(trackerParameters.additionalProperties).toBe(false);
    expect(Object.keys((think?.function.parameters as { properties: object }).properties)).toEqual(['thought', 'summary']);
    expect(tracker?.function.description).toBe(tools.get('task_tracker')?.description);
  });
});

describe('the events of a response with tool calls', () => {
  it('takes security_risk and summary out of the arguments before the tool parses them', () => {
    const { events, actions } = eventsFromToolCalls(
      response([{ name: 'task_tracker', arguments: '{"command":"view","security_risk":"MEDIUM","summary":"Show the plan"}' }], 'Checking.'),
      tools,
    );
    expect(events).toEqual(actions);
    expect(actions[0]).toMatchObject({
      action: { kind: 'TaskTrackerAction', command: 'view' },
      security_risk: 'MEDIUM',
      summary: 'Show the plan',
      thought: [{ type: 'text', text: 'Checking.' }],
      reasoning_content: 'thinking aloud',
      tool_call: { arguments: '{"command":"view","security_risk":"MEDIUM","summary":"Show the plan"}' },
    });
  });

  it('reads a security_risk it does not know as UNKNOWN', () => {
    const { actions } = eventsFromToolCalls(response([{ name: 'task_tracker', arguments: '{"security_risk":"EXTREME"}' }]), tools);
    expect(actions[0]?.security_risk).toBe('UNKNOWN');
  });

  it('puts the text and reasoning on the first action only', () => {
    const { actions } = eventsFromToolCalls(
      response(
        [
          { name: 'think', arguments: '{"thought":"a"}' },
          { name: 'think', arguments: '{"thought":"b"}' },
        ],
        'Both.',
      ),
      tools,
    );
    expect(actions.map((action) => [action.thought.length, action.reasoning_content])).toEqual([
      [1, 'thinking aloud'],
      [0, null],
    ]);
  });

  it('keeps the calls up to finish only', () => {
    const { events } = eventsFromToolCalls(
      response([
        { name: 'think', arguments: '{"thought":"a"}' },
        { name: 'finish', arguments: '{"message":"done"}' },
        { name: 'think', arguments: '{"thought":"b"}' },
      ]),
      tools,
    );
    expect(events.map((event) => event.tool_call_id)).toEqual(['call_1', 'call_2']);
  });
});
