import { describe, expect, it } from 'vitest';
import { AnyThinkingBlockSchema, MessageToolCallSchema, type MessageToolCall } from '../../../../src/events/content.js';
import { LlmError } from '../../../../src/agent-server/agent/llm/llm-error.js';
import { parseChatCompletion } from '../../../../src/agent-server/agent/llm/response.js';

let counter = 0;
const context = { model: 'asked-model', newId: () => `generated-${++counter}` };

function completion(message: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: 'chatcmpl-7', model: 'served-model', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }], ...extra };
}

function parseError(raw: unknown): LlmError {
  try {
    parseChatCompletion(raw, context);
  } catch (error) {
    expect(error).toBeInstanceOf(LlmError);
    return error as LlmError;
  }
  throw new Error('expected the parse to fail');
}

describe('parseChatCompletion', () => {
  it('keeps the server id and model, and the raw body', () => {
    const raw = completion({ content: 'hi' }, { system_fingerprint: 'fp_1' });
    const response = parseChatCompletion(raw, context);
    expect(response).toMatchObject({ id: 'chatcmpl-7', model: 'served-model', content: 'hi', finish_reason: 'stop', usage: null });
    expect(response.raw).toBe(raw);
  });

  it('makes the ids a server leaves out, and falls back to the model asked for', () => {
    const response = parseChatCompletion(
      { choices: [{ message: { content: null, tool_calls: [{ function: { name: 'think', arguments: '{}' } }] } }] },
      context,
    );
    expect(response.id).toMatch(/^chatcmpl-generated-\d+$/);
    expect(response.model).toBe('asked-model');
    expect(response.tool_calls[0]!.id).toMatch(/^call_generated-\d+$/);
    expect(response.finish_reason).toBeNull();
  });

  it('encodes object arguments and reads missing ones as an empty object', () => {
    const response = parseChatCompletion(
      completion({
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'terminal', arguments: { command: 'ls' } } },
          { id: 'b', type: 'function', function: { name: 'finish' } },
        ],
      }),
      context,
    );
    expect(response.tool_calls.map((call) => call.arguments)).toEqual(['{"command":"ls"}', '{}']);
  });

  it('joins the text parts of list content', () => {
    const response = parseChatCompletion(
      completion({ content: [{ type: 'thinking', thinking: 'hmm' }, { type: 'text', text: 'Hello, ' }, { type: 'text', text: 'world' }] }),
      context,
    );
    expect(response.content).toBe('Hello, world');
  });

  it('reads `reasoning` when `reasoning_content` is absent', () => {
    expect(parseChatCompletion(completion({ content: 'x', reasoning: 'because' }), context).reasoning_content).toBe('because');
  });

  it('keeps thinking blocks it knows, with a null signature when none came, and drops others', () => {
    const response = parseChatCompletion(
      completion({
        content: 'x',
        thinking_blocks: [{ type: 'thinking', thinking: 'step 1' }, { type: 'future_block', payload: 1 }, { type: 'redacted_thinking', data: 'enc' }],
      }),
      context,
    );
    expect(response.thinking_blocks).toEqual([
      { type: 'thinking', thinking: 'step 1', signature: null },
      { type: 'redacted_thinking', data: 'enc' },
    ]);
  });

  it('flattens usage details, and drops usage it cannot read', () => {
    const usage = {
      prompt_tokens: 100,
      completion_tokens: 20,
      prompt_tokens_details: { cached_tokens: 60 },
      completion_tokens_details: { reasoning_tokens: 12 },
    };
    expect(parseChatCompletion(completion({ content: 'x' }, { usage }), context).usage).toEqual({
      prompt_tokens: 100,
      completion_tokens: 20,
      total_tokens: 120,
      cache_read_tokens: 60,
      cache_write_tokens: 0,
      reasoning_tokens: 12,
    });
    expect(parseChatCompletion(completion({ content: 'x' }, { usage: { tokens: 'many' } }), context).usage).toBeNull();
  });

  it('yields tool calls and thinking blocks that the event model accepts as they are', () => {
    const response = parseChatCompletion(
      completion({
        tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'terminal', arguments: '{"command":"ls"}' } }],
        thinking_blocks: [{ type: 'thinking', thinking: 'plan', signature: 'sig' }, { type: 'redacted_thinking', data: 'enc' }],
      }),
      context,
    );
    const toolCalls: MessageToolCall[] = response.tool_calls;
    expect(toolCalls.map((call) => MessageToolCallSchema.parse(call))).toEqual(toolCalls);
    expect(response.thinking_blocks.map((block) => AnyThinkingBlockSchema.parse(block))).toEqual(response.thinking_blocks);
  });

  it('calls a response without choices LLMNoResponseError', () => {
    expect(parseError({ id: 'x', choices: [] }).code).toBe('LLMNoResponseError');
  });

  it.each([null, 'text', [], { choices: [{}] }, { choices: [{ message: { content: 42 } }] }])('calls %j malformed', (raw) => {
    expect(parseError(raw).code).toBe('LLMResponseError');
  });
});
