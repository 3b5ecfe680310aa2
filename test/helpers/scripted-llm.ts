import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicStream, chatStream, type SseFrame } from './scripted-llm-stream.js';
import type { ChatMessage, ChatTool, RedactedThinkingBlock, ThinkingBlock } from '../../src/agent-server/agent/llm/index.js';

/**
 * A real LLM server on 127.0.0.1 that answers each request with the next step of a script, so
 * agent tests run the real HTTP client without a model. It speaks the wire format the path asks
 * for: OpenAI Chat Completions (…/chat/completions, Azure's deployment paths included), OpenAI
 * Responses (…/responses), Anthropic Messages (…/v1/messages) and Ollama (/api/chat). When the script runs out it
 * answers 500 "script exhausted": a test that asks more than it scripted fails loudly, never hangs;
 * unless a `responder` is given, which then answers every further request (see ./task-responder).
 * Ids are counters per server: chatcmpl-1, chatcmpl-2…; call_1, call_2….
 */

export interface ScriptedToolCall {
  name: string;
  /** An object is sent JSON-encoded; a string is sent as is (to script malformed arguments). */
  arguments: Record<string, unknown> | string;
  id?: string;
}

export interface ScriptedMessage {
  content?: string | null;
  tool_calls?: ScriptedToolCall[];
  reasoning_content?: string;
  thinking_blocks?: (ThinkingBlock | RedactedThinkingBlock)[];
  finish_reason?: string;
  usage?: ScriptedUsage;
  /** A Responses reasoning item (Responses answers only). */
  reasoning_item?: { id: string; summary: string[]; encrypted_content: string | null };
}

export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  reasoning_tokens?: number;
}

export type WireFormat = 'chat' | 'responses' | 'anthropic' | 'ollama';

export function wireFormatOf(path: string): WireFormat | null {
  const pathname = path.split('?')[0] ?? '';
  if (pathname.endsWith('/chat/completions')) return 'chat';
  if (pathname.endsWith('/responses')) return 'responses';
  if (pathname.endsWith('/v1/messages')) return 'anthropic';
  if (pathname === '/api/chat') return 'ollama';
  return null;
}

/** A 200 completion carrying the message. */
export interface ReplyStep {
  reply: ScriptedMessage;
}

/** A raw answer: an object body is sent as JSON, a string as is. Without a body, an OpenAI-style error. */
export interface RawStep {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Waits, then plays `then`; with a client timeout shorter than the delay, this scripts a timeout. */
export interface DelayStep {
  delayMs: number;
  then: ScriptStep;
}

/** Never answers; `close()` drops the connection. */
export interface HangStep {
  hang: true;
}

export type ScriptStep =
  | ReplyStep
  | RawStep
  | DelayStep
  | HangStep
  | ((request: ReceivedRequest) => ScriptStep | Promise<ScriptStep>);

export interface ReceivedBody {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  tool_choice?: string;
  [field: string]: unknown;
}

export interface ReceivedRequest {
  /** With its query string. */
  path: string;
  format: WireFormat;
  /** performance.now() when the request arrived. */
  receivedAt: number;
  headers: IncomingHttpHeaders;
  body: ReceivedBody;
}

export interface ScriptedLlm {
  /** Pass as the LLM's base_url. */
  baseUrl: string;
  /** Every chat completions request received, in arrival order. */
  requests: ReceivedRequest[];
  /** Steps not yet played. */
  remaining(): number;
  close(): Promise<void>;
}

export function text(content: string, extra: Omit<ScriptedMessage, 'content' | 'tool_calls'> = {}): ReplyStep {
  return { reply: { ...extra, content } };
}

export function toolCalls(calls: ScriptedToolCall[], extra: Omit<ScriptedMessage, 'tool_calls'> = {}): ReplyStep {
  return { reply: { ...extra, tool_calls: calls } };
}

const DEFAULT_USAGE: ScriptedUsage = { prompt_tokens: 10, completion_tokens: 5 };

export interface ScriptedLlmOptions {
  /** Answers the requests after the script ran out, instead of the 500. */
  responder?: (request: ReceivedRequest) => ScriptStep | Promise<ScriptStep>;
  /** 0 (the default) picks a free one. */
  port?: number;
}

export async function startScriptedLlm(script: ScriptStep[], options: ScriptedLlmOptions = {}): Promise<ScriptedLlm> {
  const requests: ReceivedRequest[] = [];
  let played = 0;
  let completions = 0;
  let calls = 0;

  function completionBody(message: ScriptedMessage, model: string): unknown {
    const toolCallsJson = message.tool_calls?.map((call) => ({
      id: call.id ?? `call_${++calls}`,
      type: 'function',
      function: {
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      },
    }));
    const usage = message.usage ?? DEFAULT_USAGE;
    return {
      id: `chatcmpl-${++completions}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [
        {
          index: 0,
          finish_reason: message.finish_reason ?? (toolCallsJson?.length ? 'tool_calls' : 'stop'),
          message: {
            role: 'assistant',
            content: message.content ?? null,
            ...(toolCallsJson !== undefined ? { tool_calls: toolCallsJson } : {}),
            ...(message.reasoning_content !== undefined ? { reasoning_content: message.reasoning_content } : {}),
            ...(message.thinking_blocks !== undefined ? { thinking_blocks: message.thinking_blocks } : {}),
          },
        },
      ],
      usage: {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        total_tokens: usage.prompt_tokens + usage.completion_tokens,
        prompt_tokens_details: { cached_tokens: usage.cache_read_tokens ?? 0 },
        completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
      },
    };
  }

  function replyBody(format: WireFormat, message: ScriptedMessage, model: string): unknown {
    switch (format) {
      case 'chat':
        return completionBody(message, model);
      case 'responses':
        return responsesBody(message, model);
      case 'anthropic':
        return anthropicBody(message, model);
      case 'ollama':
        return ollamaBody(message, model);
    }
  }

  function callId(call: ScriptedToolCall): string {
    return call.id ?? `call_${++calls}`;
  }

  function argumentsText(call: ScriptedToolCall): string {
    return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
  }

  function responsesBody(message: ScriptedMessage, model: string): unknown {
    const usage = message.usage ?? DEFAULT_USAGE;
    const output: unknown[] = [];
    if (message.reasoning_item) {
      const item = message.reasoning_item;
      output.push({ type: 'reasoning', id: item.id, summary: item.summary.map((text) => ({ type: 'summary_text', text })), encrypted_content: item.encrypted_content });
    }
    if (message.content) output.push({ type: 'message', id: `msg_${completions}`, role: 'assistant', content: [{ type: 'output_text', text: message.content, annotations: [] }] });
    for (const call of message.tool_calls ?? []) {
      output.push({ type: 'function_call', id: `fc_${calls}`, call_id: callId(call), name: call.name, arguments: argumentsText(call), status: 'completed' });
    }
    return {
      id: `resp_${++completions}`,
      object: 'response',
      model,
      status: 'completed',
      output,
      usage: {
        input_tokens: usage.prompt_tokens,
        output_tokens: usage.completion_tokens,
        total_tokens: usage.prompt_tokens + usage.completion_tokens,
        input_tokens_details: { cached_tokens: usage.cache_read_tokens ?? 0 },
        output_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
      },
    };
  }

  /** Anthropic counts input tokens apart from the cached ones: `prompt_tokens` here is their sum. */
  function anthropicBody(message: ScriptedMessage, model: string): unknown {
    const usage = message.usage ?? DEFAULT_USAGE;
    const cacheRead = usage.cache_read_tokens ?? 0;
    const cacheWrite = usage.cache_write_tokens ?? 0;
    const content: unknown[] = [...(message.thinking_blocks ?? [])];
    if (message.content) content.push({ type: 'text', text: message.content });
    for (const call of message.tool_calls ?? []) {
      content.push({ type: 'tool_use', id: call.id ?? `toolu_${++calls}`, name: call.name, input: typeof call.arguments === 'string' ? JSON.parse(call.arguments) : call.arguments });
    }
    return {
      id: `msg_${++completions}`,
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: message.tool_calls?.length ? 'tool_use' : 'end_turn',
      usage: {
        input_tokens: usage.prompt_tokens - cacheRead - cacheWrite,
        output_tokens: usage.completion_tokens,
        cache_read_input_tokens: cacheRead,
        cache_creation_input_tokens: cacheWrite,
      },
    };
  }

  function ollamaBody(message: ScriptedMessage, model: string): unknown {
    const usage = message.usage ?? DEFAULT_USAGE;
    completions++;
    return {
      model,
      created_at: new Date().toISOString(),
      message: {
        role: 'assistant',
        content: message.content ?? '',
        ...(message.reasoning_content !== undefined ? { thinking: message.reasoning_content } : {}),
        ...(message.tool_calls
          ? { tool_calls: message.tool_calls.map((call) => ({ function: { name: call.name, arguments: typeof call.arguments === 'string' ? JSON.parse(call.arguments) : call.arguments } })) }
          : {}),
      },
      done: true,
      done_reason: 'stop',
      prompt_eval_count: usage.prompt_tokens,
      eval_count: usage.completion_tokens,
    };
  }

  async function play(step: ScriptStep, request: ReceivedRequest, res: ServerResponse): Promise<void> {
    if (typeof step === 'function') return play(await step(request), request, res);
    if ('hang' in step) return;
    if ('delayMs' in step) {
      await new Promise((resolve) => setTimeout(resolve, step.delayMs).unref());
      return play(step.then, request, res);
    }
    if ('reply' in step) {
      const whole = replyBody(request.format, step.reply, request.body.model);
      const streamed = request.body.stream === true ? streamOf(request.format, whole) : null;
      return streamed ? sendStream(res, streamed) : send(res, 200, whole);
    }
    const body = step.body ?? { error: { message: `scripted failure ${step.status}`, type: 'scripted_error', code: null } };
    send(res, step.status, body, step.headers);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const format = wireFormatOf(req.url ?? '');
    if (req.method !== 'POST' || format === null) {
      return send(res, 404, errorBody(`scripted LLM serves POST to an LLM API path only, not ${req.method} ${req.url}`));
    }
    let body: ReceivedBody;
    try {
      body = JSON.parse(raw) as ReceivedBody;
    } catch {
      return send(res, 400, errorBody('scripted LLM: the request body is not JSON'));
    }
    const request: ReceivedRequest = { path: req.url ?? '', format, receivedAt: performance.now(), headers: req.headers, body };
    requests.push(request);
    const step = script[played] ?? options.responder;
    if (step === undefined) {
      return send(res, 500, errorBody(`scripted LLM: script exhausted (request ${requests.length}, the script has ${script.length} steps)`));
    }
    if (played < script.length) played++;
    await play(step, request, res);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => send(res, 500, errorBody(`scripted LLM: the step failed: ${String(error)}`)));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    remaining: () => script.length - played,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function errorBody(message: string): unknown {
  return { error: { message, type: 'scripted_llm_error', code: null } };
}

/** Skips answers to clients that already gave up (timeouts, aborts). */
function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.headersSent) return;
  const isText = typeof body === 'string';
  res.writeHead(status, { 'content-type': isText ? 'text/plain' : 'application/json', ...headers });
  res.end(isText ? body : JSON.stringify(body));
}

/** The formats whose streaming the scripted LLM speaks; the others answer whole. */
function streamOf(format: WireFormat, whole: unknown): SseFrame[] | null {
  if (format === 'chat') return chatStream(whole);
  if (format === 'anthropic') return anthropicStream(whole);
  return null;
}

/** One write per frame, a macrotask apart, so that the client reads them as separate pieces. */
async function sendStream(res: ServerResponse, frames: SseFrame[]): Promise<void> {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const frame of frames) {
    if (res.destroyed) return;
    const data = typeof frame.data === 'string' ? frame.data : JSON.stringify(frame.data);
    res.write(`${frame.event ? `event: ${frame.event}\n` : ''}data: ${data}\n\n`);
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
