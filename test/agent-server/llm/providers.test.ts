import { describe, expect, it } from 'vitest';
import { toolCalls, type ReceivedRequest, type ScriptStep, type WireFormat } from '../../helpers/scripted-llm.js';
import { useLlmConversations } from './harness.js';

/**
 * A conversation with tool calls on each provider, against a stand-in speaking that provider's wire
 * format: the call goes where the model prefix says, the tool result goes back in the provider's
 * shape under the id the provider gave the call, and the run finishes.
 */

describe('providers by model prefix', () => {
  const conversations = useLlmConversations('llm-providers');
  const run = (llm: Record<string, unknown>, script: ScriptStep[]) => conversations.run(script, { llm });

  const TWO_STEPS: ScriptStep[] = [
    toolCalls([{ name: 'terminal', arguments: { command: 'echo hello' }, id: 'call_echo' }]),
    toolCalls([{ name: 'finish', arguments: { message: 'said hello' } }]),
  ];

  /** Where the second request carries the terminal's result, in each wire format. */
  function toolResultOf(request: ReceivedRequest): { id: unknown; text: string } {
    const body = request.body as Record<string, unknown>;
    const items = (body.messages ?? body.input) as Record<string, unknown>[];
    switch (request.format) {
      case 'chat': {
        const result = items.find((message) => message.role === 'tool')!;
        return { id: result.tool_call_id, text: JSON.stringify(result.content) };
      }
      case 'responses': {
        const result = items.find((item) => item.type === 'function_call_output')!;
        return { id: result.call_id, text: JSON.stringify(result.output) };
      }
      case 'anthropic': {
        const blocks = items.flatMap((message) => (Array.isArray(message.content) ? (message.content as Record<string, unknown>[]) : []));
        const result = blocks.find((block) => block.type === 'tool_result')!;
        return { id: result.tool_use_id, text: JSON.stringify(result.content) };
      }
      case 'ollama': {
        const result = items.find((message) => message.role === 'tool')!;
        return { id: 'call_echo', text: JSON.stringify(result.content) };
      }
    }
  }

  it.each<[string, Record<string, unknown>, WireFormat, RegExp, string]>([
    ['openai/ (Chat Completions)', { model: 'openai/gpt-4o' }, 'chat', /^\/v1\/chat\/completions$/, 'gpt-4o'],
    ['openai/ (Responses API)', { model: 'openai/gpt-5-codex' }, 'responses', /^\/v1\/responses$/, 'gpt-5-codex'],
    ['anthropic/ (Messages)', { model: 'anthropic/claude-sonnet-4-5' }, 'anthropic', /^\/v1\/messages$/, 'claude-sonnet-4-5'],
    ['azure/ (deployment)', { model: 'azure/team-gpt4o', base_url: 'ORIGIN' }, 'chat', /^\/openai\/deployments\/team-gpt4o\/chat\/completions\?api-version=2024-12-01-preview$/, 'team-gpt4o'],
    ['ollama/', { model: 'ollama/llama3.1', base_url: 'ORIGIN' }, 'ollama', /^\/api\/chat$/, 'llama3.1'],
    ['openrouter/', { model: 'openrouter/meta-llama/llama-3.3-70b-instruct' }, 'chat', /^\/v1\/chat\/completions$/, 'meta-llama/llama-3.3-70b-instruct'],
    ['gemini/', { model: 'gemini/gemini-2.0-flash' }, 'chat', /^\/v1\/chat\/completions$/, 'gemini-2.0-flash'],
    ['litellm_proxy/', { model: 'litellm_proxy/team/coder' }, 'chat', /^\/v1\/chat\/completions$/, 'team/coder'],
    ['a bare name', { model: 'Qwen/Qwen2.5-Coder-32B-Instruct' }, 'chat', /^\/v1\/chat\/completions$/, 'Qwen/Qwen2.5-Coder-32B-Instruct'],
  ])('runs a conversation with tool calls on %s', async (_name, settings, format, path, model) => {
    const { requests, info, events } = await run(settings, TWO_STEPS);

    expect(info.execution_status).toBe('finished');
    expect(requests.map((request) => request.format)).toEqual([format, format]);
    expect(requests[0]!.path).toMatch(path);
    expect(requests[0]!.body.model).toBe(model);
    const action = events.find((event) => event.kind === 'ActionEvent' && event.tool_name === 'terminal');
    const observation = events.find((event) => event.kind === 'ObservationEvent' && event.tool_name === 'terminal');
    expect(JSON.stringify(observation)).toContain('hello');
    const result = toolResultOf(requests[1]!);
    if (format !== 'ollama') {
      expect(action).toMatchObject({ tool_call_id: 'call_echo' });
      expect(result.id).toBe('call_echo');
    }
    expect(result.text).toContain('hello');
    expect(info.stats.usage_to_metrics.default?.accumulated_token_usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 10 });
  });

  it('sends Anthropic its signed thinking back, with cache breakpoints, and counts cache tokens', async () => {
    const thinking = { type: 'thinking' as const, thinking: 'I should echo.', signature: 'sig-abc' };
    const { requests, info, events } = await run({ model: 'anthropic/claude-sonnet-4-5', caching_prompt: true, extended_thinking_budget: 4000, max_output_tokens: 8000 }, [
      toolCalls([{ name: 'terminal', arguments: { command: 'echo hello' }, id: 'toolu_1' }], {
        thinking_blocks: [thinking, { type: 'redacted_thinking', data: 'opaque' }],
        usage: { prompt_tokens: 1000, completion_tokens: 50, cache_write_tokens: 900 },
      }),
      toolCalls([{ name: 'finish', arguments: { message: 'done' } }], { usage: { prompt_tokens: 1200, completion_tokens: 20, cache_read_tokens: 900 } }),
    ]);

    expect(info.execution_status).toBe('finished');
    const first = requests[0]!.body as Record<string, unknown>;
    expect(first.thinking).toEqual({ type: 'enabled', budget_tokens: 4000 });
    expect(first.temperature).toBeUndefined();
    expect(requests[0]!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(requests[0]!.headers['x-api-key']).toBe('sk-test');
    const system = first.system as { cache_control?: unknown }[];
    expect(system.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
    expect((first.tools as { cache_control?: unknown }[]).at(-1)?.cache_control).toEqual({ type: 'ephemeral' });

    const second = requests[1]!.body as unknown as { messages: { role: string; content: Record<string, unknown>[] }[] };
    const assistant = second.messages.find((message) => message.role === 'assistant')!;
    expect(assistant.content.slice(0, 3)).toEqual([thinking, { type: 'redacted_thinking', data: 'opaque' }, { type: 'tool_use', id: 'toolu_1', name: 'terminal', input: expect.objectContaining({ command: 'echo hello' }) }]);
    const marked = second.messages.filter((message) => message.content.at(-1)?.cache_control !== undefined);
    expect(marked.map((message) => message.role)).toEqual(['user', 'user']);

    const action = events.find((event) => event.kind === 'ActionEvent' && event.tool_name === 'terminal');
    expect(action).toMatchObject({ thinking_blocks: [thinking, { type: 'redacted_thinking', data: 'opaque' }], reasoning_content: 'I should echo.' });
    expect(info.stats.usage_to_metrics.default?.accumulated_token_usage).toMatchObject({
      prompt_tokens: 2200,
      completion_tokens: 70,
      cache_read_tokens: 900,
      cache_write_tokens: 900,
    });
  });

  it('sends the Responses API its reasoning item back and records it on the action', async () => {
    const item = { id: 'rs_1', summary: ['Run echo first.'], encrypted_content: 'gAAAA-encrypted' };
    const { requests, info, events } = await run({ model: 'openai/gpt-5-codex', reasoning_effort: 'medium' }, [
      toolCalls([{ name: 'terminal', arguments: { command: 'echo hello' }, id: 'call_r1' }], { reasoning_item: item, usage: { prompt_tokens: 100, completion_tokens: 40, reasoning_tokens: 30, cache_read_tokens: 64 } }),
      toolCalls([{ name: 'finish', arguments: { message: 'done' } }]),
    ]);

    expect(info.execution_status).toBe('finished');
    const first = requests[0]!.body as Record<string, unknown>;
    expect(first).toMatchObject({ reasoning: { effort: 'medium' }, include: ['reasoning.encrypted_content'], store: false });
    expect(typeof first.instructions).toBe('string');
    const input = (requests[1]!.body as unknown as { input: Record<string, unknown>[] }).input;
    const reasoningAt = input.findIndex((entry) => entry.type === 'reasoning');
    expect(input[reasoningAt]).toMatchObject({ id: 'rs_1', encrypted_content: 'gAAAA-encrypted', summary: [{ type: 'summary_text', text: 'Run echo first.' }] });
    expect(input[reasoningAt + 1]).toMatchObject({ type: 'function_call', call_id: 'call_r1', name: 'terminal' });
    const action = events.find((event) => event.kind === 'ActionEvent' && event.tool_name === 'terminal');
    expect(action).toMatchObject({
      responses_reasoning_item: { id: 'rs_1', summary: ['Run echo first.'], encrypted_content: 'gAAAA-encrypted' },
      tool_call: { id: 'call_r1', origin: 'responses' },
    });
    expect(info.stats.usage_to_metrics.default?.accumulated_token_usage).toMatchObject({ reasoning_tokens: 30, cache_read_tokens: 64 });
  });

  it('calls tools through the prompt when native tool calling is off', async () => {
    const { requests, info, events } = await run({ model: 'ollama/llama3', base_url: 'ORIGIN', native_tool_calling: false }, [
      { reply: { content: 'Let me look.\n<function=terminal>\n<parameter=command>echo hello</parameter>\n' } },
      { reply: { content: '<function=finish>\n<parameter=message>said hello</parameter>\n</function>' } },
    ]);

    expect(info.execution_status).toBe('finished');
    const first = requests[0]!.body as unknown as { tools?: unknown; options?: { stop?: string[] } };
    expect(first.tools).toBeUndefined();
    expect(first.options?.stop).toEqual(['</function']);
    const messages = (requests[1]!.body as unknown as { messages: { role: string; content: string }[] }).messages;
    expect(messages.find((message) => message.role === 'assistant')?.content).toContain('<function=terminal>');
    expect(messages.find((message) => message.content.startsWith('EXECUTION RESULT of [terminal]'))?.content).toContain('hello');
    expect(events.find((event) => event.kind === 'ActionEvent' && event.tool_name === 'terminal')).toMatchObject({
      thought: [{ type: 'text', text: 'Let me look.' }],
      action: { kind: 'TerminalAction', command: 'echo hello' },
    });
  });
});
