import { afterEach, describe, expect, it } from 'vitest';
import {
  createLlmClient,
  LlmError,
  type ChatMessage,
  type ChatTool,
  type LlmConfig,
} from '../../../../src/agent-server/agent/llm/index.js';
import { freePort } from '../../../helpers/processes.js';
import { startScriptedLlm, text, toolCalls, type ScriptedLlm, type ScriptStep } from '../../../helpers/scripted-llm.js';

const API_KEY = 'sk-test-0123456789abcdef';
const MESSAGES: ChatMessage[] = [
  { role: 'system', content: 'You are a helpful agent.' },
  { role: 'user', content: 'list the files' },
];
const TERMINAL_TOOL: ChatTool = {
  type: 'function',
  function: {
    name: 'terminal',
    description: 'Run a shell command',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
};

let llm: ScriptedLlm | undefined;
afterEach(async () => {
  await llm?.close();
  llm = undefined;
});

/** A client of a fresh scripted server, retrying with recorded zero-time sleeps. */
async function scripted(script: ScriptStep[], config: Partial<LlmConfig> = {}) {
  llm = await startScriptedLlm(script);
  const sleeps: number[] = [];
  const client = createLlmClient(
    { model: 'openai/gpt-4o', base_url: llm.baseUrl, api_key: API_KEY, retry_min_wait_ms: 10, retry_max_wait_ms: 40, ...config },
    { sleep: async (ms) => void sleeps.push(ms) },
  );
  return { llm, client, sleeps };
}

async function failure(promise: Promise<unknown>): Promise<LlmError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(LlmError);
  return error as LlmError;
}

describe('createLlmClient', () => {
  it('returns the assistant text of a completion', async () => {
    const { llm, client } = await scripted([text('hello')]);

    const response = await client.complete({ messages: MESSAGES });

    expect(response).toMatchObject({
      id: 'chatcmpl-1',
      model: 'gpt-4o',
      content: 'hello',
      tool_calls: [],
      reasoning_content: null,
      thinking_blocks: [],
      finish_reason: 'stop',
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cache_read_tokens: 0, reasoning_tokens: 0 },
    });
    expect(response.raw).toMatchObject({ id: 'chatcmpl-1', object: 'chat.completion' });
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]!.path).toBe('/v1/chat/completions');
  });

  it('posts the bare model name, the messages, the tools and the sampling settings', async () => {
    const { llm, client } = await scripted([text('ok')], { temperature: 0, max_output_tokens: 512 });

    await client.complete({ messages: MESSAGES, tools: [TERMINAL_TOOL] });

    expect(llm.requests[0]!.body).toEqual({
      model: 'gpt-4o',
      messages: MESSAGES,
      tools: [TERMINAL_TOOL],
      tool_choice: 'auto',
      temperature: 0,
      max_completion_tokens: 512,
    });
  });

  it('sends neither tools nor tool_choice when there are no tools', async () => {
    const { llm, client } = await scripted([text('ok')]);

    await client.complete({ messages: MESSAGES, tools: [] });

    expect(llm.requests[0]!.body).toEqual({ model: 'gpt-4o', messages: MESSAGES });
  });

  it('sends the api key as a bearer token, and no Authorization header without one', async () => {
    const { llm, client } = await scripted([text('ok')]);
    await client.complete({ messages: MESSAGES });
    expect(llm.requests[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    await llm.close();

    const keyless = await scripted([text('ok')], { api_key: null });
    await keyless.client.complete({ messages: MESSAGES });
    expect(keyless.llm.requests[0]!.headers).not.toHaveProperty('authorization');
  });

  it('parses one tool call with its raw JSON arguments', async () => {
    const { client } = await scripted([toolCalls([{ name: 'terminal', arguments: { command: 'ls' } }])]);

    const response = await client.complete({ messages: MESSAGES, tools: [TERMINAL_TOOL] });

    expect(response.content).toBeNull();
    expect(response.finish_reason).toBe('tool_calls');
    expect(response.tool_calls).toEqual([{ id: 'call_1', name: 'terminal', arguments: '{"command":"ls"}', origin: 'completion' }]);
  });

  it('parses parallel tool calls of one response in order, keeping malformed arguments as written', async () => {
    const { client } = await scripted([
      toolCalls(
        [
          { name: 'terminal', arguments: { command: 'ls' } },
          { name: 'terminal', arguments: '{"command": "pwd"' },
        ],
        { content: 'Looking around.' },
      ),
    ]);

    const response = await client.complete({ messages: MESSAGES, tools: [TERMINAL_TOOL] });

    expect(response.id).toBe('chatcmpl-1');
    expect(response.content).toBe('Looking around.');
    expect(response.tool_calls.map((call) => [call.id, call.arguments])).toEqual([
      ['call_1', '{"command":"ls"}'],
      ['call_2', '{"command": "pwd"'],
    ]);
  });

  it('keeps reasoning content and thinking blocks', async () => {
    const thinking_blocks = [
      { type: 'thinking' as const, thinking: 'The user wants a listing.', signature: 'sig-1' },
      { type: 'redacted_thinking' as const, data: 'opaque' },
    ];
    const { client } = await scripted([
      toolCalls([{ name: 'terminal', arguments: { command: 'ls' } }], { reasoning_content: 'ls shows the files', thinking_blocks }),
    ]);

    const response = await client.complete({ messages: MESSAGES, tools: [TERMINAL_TOOL] });

    expect(response.reasoning_content).toBe('ls shows the files');
    expect(response.thinking_blocks).toEqual(thinking_blocks);
  });

  it('retries a 429 (honouring Retry-After) and a 503, then succeeds', async () => {
    const { llm, client, sleeps } = await scripted([{ status: 429, headers: { 'retry-after': '0' } }, { status: 503 }, text('finally')]);

    const response = await client.complete({ messages: MESSAGES });

    expect(response.content).toBe('finally');
    expect(llm.requests).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
    expect(sleeps[0]).toBe(0);
    // Second retry: 2 × retry_min_wait_ms plus up to 25% jitter, within retry_max_wait_ms.
    expect(sleeps[1]).toBeGreaterThanOrEqual(20);
    expect(sleeps[1]).toBeLessThanOrEqual(25);
  });

  it('caps a long Retry-After at retry_max_wait_ms', async () => {
    const { client, sleeps } = await scripted([{ status: 429, headers: { 'retry-after': '3600' } }, text('ok')]);

    await client.complete({ messages: MESSAGES });

    expect(sleeps).toEqual([40]);
  });

  it.each([
    [503, 'LLMServiceUnavailableError'],
    [500, 'LLMServiceUnavailableError'],
    [429, 'LLMRateLimitError'],
  ] as const)('gives up on repeated %i after max_retries with %s', async (status, code) => {
    const { llm, client, sleeps } = await scripted([{ status }, { status }, { status }, text('never reached')], { max_retries: 2 });

    const error = await failure(client.complete({ messages: MESSAGES }));

    expect(error.code).toBe(code);
    expect(error.status).toBe(status);
    expect(error.detail).toContain(`scripted failure ${status}`);
    expect(error.detail).toContain('gave up after 3 attempts');
    expect(llm.requests).toHaveLength(3);
    expect(llm.remaining()).toBe(1);
    expect(sleeps).toHaveLength(2);
  });

  it.each([
    [400, 'LLMBadRequestError', 'Invalid value for tool_choice'],
    [401, 'LLMAuthenticationError', 'Incorrect API key provided'],
    [403, 'LLMAuthenticationError', 'Model access denied'],
    [404, 'LLMBadRequestError', 'The model gpt-5 does not exist'],
  ] as const)('does not retry a %i: %s carrying the status and the server message', async (status, code, message) => {
    const { llm, client, sleeps } = await scripted([{ status, body: { error: { message, type: 'invalid_request_error' } } }, text('ok')]);

    const error = await failure(client.complete({ messages: MESSAGES }));

    expect(error.code).toBe(code);
    expect(error.status).toBe(status);
    expect(error.detail).toContain(String(status));
    expect(error.detail).toContain(message);
    expect(llm.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('reports an overlong prompt as LLMContextWindowExceedError', async () => {
    const { client } = await scripted([
      {
        status: 400,
        body: {
          error: {
            message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
            code: 'context_length_exceeded',
          },
        },
      },
    ]);

    const error = await failure(client.complete({ messages: MESSAGES }));

    expect(error.code).toBe('LLMContextWindowExceedError');
  });

  it('never puts the api key in an error detail, even when the server echoes it', async () => {
    const { client } = await scripted([{ status: 401, body: { error: { message: `Incorrect API key provided: ${API_KEY}` } } }]);

    const error = await failure(client.complete({ messages: MESSAGES }));

    expect(error.code).toBe('LLMAuthenticationError');
    expect(error.detail).toContain('Incorrect API key provided');
    expect(error.detail).not.toContain(API_KEY);
    expect(error.message).not.toContain(API_KEY);
  });

  it('times out a call that gets no answer', async () => {
    // Long enough for the request to reach the stand-in on a busy machine: at 50 ms it sometimes
    // timed out before the stand-in had seen it.
    const { llm, client } = await scripted([{ hang: true }], { timeout_ms: 1_000, max_retries: 0 });

    const error = await failure(client.complete({ messages: MESSAGES }));

    expect(error.code).toBe('LLMTimeoutError');
    expect(llm.requests).toHaveLength(1);
  });

  it('retries after a timeout and takes the next answer', async () => {
    // The timeout applies to the second attempt too: generous, so a busy machine cannot trip it.
    const { llm, client, sleeps } = await scripted([{ delayMs: 60_000, then: text('too late') }, text('in time')], {
      timeout_ms: 500,
      max_retries: 1,
    });

    const response = await client.complete({ messages: MESSAGES });

    expect(response.content).toBe('in time');
    expect(llm.requests).toHaveLength(2);
    expect(sleeps).toHaveLength(1);
  });

  it('reports a refused connection as LLMConnectionError', async () => {
    const port = await freePort();
    const sleeps: number[] = [];
    const client = createLlmClient(
      { model: 'gpt-4o', base_url: `http://127.0.0.1:${port}/v1`, api_key: API_KEY, max_retries: 1, retry_min_wait_ms: 1 },
      { sleep: async (ms) => void sleeps.push(ms) },
    );

    const error = await failure(client.complete({ messages: MESSAGES }));

    expect(error.code).toBe('LLMConnectionError');
    expect(error.status).toBeNull();
    expect(error.detail).toContain(`127.0.0.1:${port}`);
    expect(sleeps).toHaveLength(1);
  });

  it.each([
    ['a body that is not JSON', 'upstream exploded', 'not JSON: upstream exploded'],
    ['JSON without choices', { id: 'chatcmpl-x', object: 'chat.completion' }, 'choices'],
    [
      'a tool call without a function name',
      { choices: [{ message: { tool_calls: [{ id: 'c', function: { arguments: '{}' } }] } }] },
      'choices[0].message.tool_calls[0].function.name',
    ],
  ])('rejects %s with LLMResponseError and does not retry', async (_, body, where) => {
    const { llm, client } = await scripted([{ status: 200, body }, text('ok')]);

    const error = await failure(client.complete({ messages: MESSAGES }));

    expect(error.code).toBe('LLMResponseError');
    expect(error.detail).toContain(where);
    expect(llm.requests).toHaveLength(1);
  });

  it('retries a response without choices as LLMNoResponseError', async () => {
    const { llm, client } = await scripted([{ status: 200, body: { id: 'chatcmpl-x', choices: [] } }, text('ok')]);

    const response = await client.complete({ messages: MESSAGES });

    expect(response.content).toBe('ok');
    expect(llm.requests).toHaveLength(2);
  });

  it('rejects with the abort reason when the caller aborts, without retrying', async () => {
    const controller = new AbortController();
    const reason = new Error('paused by the user');
    const { llm, client } = await scripted([
      () => {
        controller.abort(reason);
        return { hang: true };
      },
      text('never reached'),
    ]);

    await expect(client.complete({ messages: MESSAGES, signal: controller.signal })).rejects.toBe(reason);
    expect(llm.requests).toHaveLength(1);
  });

  it('stops waiting between retries when the caller aborts', async () => {
    llm = await startScriptedLlm([{ status: 503 }, text('never reached')]);
    const controller = new AbortController();
    const reason = new Error('conversation deleted');
    // Hands the client a fully read answer and aborts just after, while the client waits to retry.
    const abortAfterAnswer: typeof fetch = async (input, init) => {
      const answer = await fetch(input, init);
      const body = await answer.text();
      setTimeout(() => controller.abort(reason), 10);
      return new Response(body, { status: answer.status, headers: answer.headers });
    };
    const client = createLlmClient(
      { model: 'gpt-4o', base_url: llm.baseUrl, retry_min_wait_ms: 600_000, retry_max_wait_ms: 600_000 },
      { fetch: abortAfterAnswer },
    );

    await expect(client.complete({ messages: MESSAGES, signal: controller.signal })).rejects.toBe(reason);
    expect(llm.requests).toHaveLength(1);
  });

  it('fails visibly when the script is exhausted', async () => {
    const { client } = await scripted([], { max_retries: 0 });

    const error = await failure(client.complete({ messages: MESSAGES }));

    expect(error.code).toBe('LLMServiceUnavailableError');
    expect(error.detail).toContain('script exhausted');
  });

  it('rejects a base_url that is not an http(s) URL as a bad request', async () => {
    const client = createLlmClient({ model: 'gpt-4o', base_url: 'not a url' });

    const error = await failure(client.complete({ messages: MESSAGES }));

    expect(error.code).toBe('LLMBadRequestError');
  });
});
