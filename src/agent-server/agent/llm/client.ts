import { randomUUID } from 'node:crypto';
import { LLM_RELAY_VERDICT_HEADER } from '../../../contracts/llm-providers.js';
import { logger } from '../../../logger.js';
import type { ChatMessage, ChatTool } from './chat-messages.js';
import type { LlmConfig } from './config.js';
import { anthropicMessages } from './dialects/anthropic.js';
import type { Dialect, DialectRequest } from './dialects/dialect.js';
import { ollamaChat } from './dialects/ollama.js';
import { openAiChat } from './dialects/openai-chat.js';
import { openAiResponses } from './dialects/openai-responses.js';
import { errorFromHttpStatus, LlmError } from './llm-error.js';
import { modelFeatures } from './model-features.js';
import { prepareMessages } from './prepare-messages.js';
import { PROMPT_TOOL_STOP_WORDS, promptToolMessages, readPromptToolCalls } from './prompt-tool-calling.js';
import { resolveRoute, type DialectName } from './provider.js';
import type { LlmResponse } from './response.js';
import { parseRetryAfterMs, retryDelayMs } from './retry-delay.js';
import type { LlmDelta } from './streaming/delta.js';
import { readSse } from './streaming/sse.js';

export interface LlmRequest {
  messages: ChatMessage[];
  tools?: ChatTool[];
  /** Aborting stops the call at once, retries included; `complete` then rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Hears the answer's pieces as they arrive when the config asks for streaming (a retried call
   * streams again from its start). The answer `complete` resolves with is the same either way.
   */
  onDelta?: (delta: LlmDelta) => void;
}

/** One call's request, sent as is by every attempt. */
interface Call {
  url: URL;
  headers: Record<string, string>;
  body: string;
  dialect: Dialect;
  signal: AbortSignal | undefined;
  stream: Dialect['stream'];
  onDelta: ((delta: LlmDelta) => void) | undefined;
}

/** The answer, and how long its successful attempt took. */
export type LlmAnswer = LlmResponse & { latency_ms: number };

export interface LlmClient {
  /** The configuration the client was made with (its model names the metrics). */
  readonly config: LlmConfig;
  /** Resolves with the model's answer or rejects with an LlmError (or the abort reason). */
  complete(request: LlmRequest): Promise<LlmAnswer>;
}

export interface LlmClientDeps {
  fetch?: typeof fetch;
  /** Waits between retries; must reject with the signal's reason when it aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** OpenHands' retry schedule (5 retries, 8 s doubling up to 64 s); its timeout is longer (300 s). */
export const LLM_DEFAULTS = {
  timeout_ms: 120_000,
  max_retries: 5,
  retry_min_wait_ms: 8_000,
  retry_max_wait_ms: 64_000,
} as const;

const DIALECTS: Readonly<Record<DialectName, Dialect>> = {
  'openai-chat': openAiChat,
  'openai-responses': openAiResponses,
  anthropic: anthropicMessages,
  ollama: ollamaChat,
};

const log = logger.child({ component: 'llm' });

/**
 * A client of one model, at the provider its name picks (provider.ts), in that provider's wire
 * format (dialects/). It retries rate limits, 5xx, timeouts and network failures with backoff,
 * and fails at once on other 4xx. The api key and the extra headers travel in headers only: they
 * are never logged, and they are cut out of every error detail (a server may echo them back).
 */
export function createLlmClient(config: LlmConfig, deps: LlmClientDeps = {}): LlmClient {
  const fetchImpl = deps.fetch ?? fetch;
  const sleep = deps.sleep ?? abortableSleep;
  const timeoutMs = config.timeout_ms ?? LLM_DEFAULTS.timeout_ms;
  const maxRetries = config.max_retries ?? LLM_DEFAULTS.max_retries;
  const minWaitMs = config.retry_min_wait_ms ?? LLM_DEFAULTS.retry_min_wait_ms;
  const backoff = {
    minWaitMs,
    maxWaitMs: config.retry_max_wait_ms ?? LLM_DEFAULTS.retry_max_wait_ms,
    multiplierMs: config.retry_multiplier_ms ?? minWaitMs,
  };
  const secrets = [config.api_key, ...Object.values(config.extra_headers ?? {})].filter((value): value is string => typeof value === 'string' && value.length >= 4);
  const withoutSecrets = (text: string): string => secrets.reduce((redacted, secret) => redacted.replaceAll(secret, '[redacted]'), text);
  const features = modelFeatures(config.model_canonical_name ?? config.model);

  async function attempt(call: Call): Promise<LlmAnswer> {
    const { url, signal } = call;
    const timeout = AbortSignal.timeout(timeoutMs);
    const started = performance.now();
    let response: Response;
    let raw: unknown;
    try {
      response = await fetchImpl(url, {
        method: 'POST',
        headers: call.headers,
        body: call.body,
        signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
      });
      raw = response.ok && call.stream && isEventStream(response) ? await readStream(response, call) : await response.text();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof LlmError) throw error;
      if (timeout.aborted) throw new LlmError('LLMTimeoutError', `no answer from ${url.origin}${url.pathname} within ${timeoutMs} ms`);
      throw new LlmError('LLMConnectionError', `could not reach ${url.origin}${url.pathname}: ${networkReason(error)}`);
    }
    if (!response.ok) {
      const retryAfterMs = parseRetryAfterMs(response.headers, Date.now());
      throw errorFromHttpStatus(response.status, response.statusText, String(raw), retryAfterMs, response.headers.get(LLM_RELAY_VERDICT_HEADER));
    }
    if (typeof raw === 'string') raw = parseJsonBody(raw, response.status);
    const answer = call.dialect.parse(raw, { model: config.model, newId: randomUUID });
    return { ...answer, latency_ms: performance.now() - started };
  }

  return {
    config,
    async complete({ messages, tools, signal, onDelta }) {
      const route = resolveRoute(config);
      const dialect = DIALECTS[route.dialect];
      const promptTools = config.native_tool_calling === false && tools !== undefined && tools.length > 0 ? tools : undefined;
      const prepared = prepareMessages(promptTools ? promptToolMessages(messages, promptTools) : messages, config);
      const request: DialectRequest = {
        route,
        config,
        features,
        messages: prepared,
        tools: promptTools ? undefined : tools,
        stop: promptTools && !config.disable_stop_word ? PROMPT_TOOL_STOP_WORDS : undefined,
      };
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json',
        ...route.headers,
        ...dialect.headers?.(request),
        ...config.extra_headers,
      };
      const stream = config.stream === true ? dialect.stream : undefined;
      const body = JSON.stringify({ ...dialect.body(request), ...stream?.fields });
      if (stream) headers.accept = 'text/event-stream';
      const call: Call = { url: route.url, headers, body, dialect, signal, stream, onDelta };
      for (let attempts = 1; ; attempts++) {
        try {
          const answer = await attempt(call);
          return promptTools ? { ...readPromptToolCalls(answer, promptTools, randomUUID), latency_ms: answer.latency_ms } : answer;
        } catch (error) {
          if (!(error instanceof LlmError)) throw error;
          const failure = error.withDetail(withoutSecrets(error.detail));
          if (!failure.retryable || attempts > maxRetries) {
            throw attempts === 1 ? failure : failure.withDetail(`${failure.detail} (gave up after ${attempts} attempts)`);
          }
          const delayMs = retryDelayMs(attempts - 1, backoff, failure.retryAfterMs, Math.random());
          log.warn({ model: config.model, code: failure.code, status: failure.status, attempt: attempts, delay_ms: delayMs }, 'LLM call failed; retrying');
          await sleep(delayMs, signal);
        }
      }
    },
  };
}

function parseJsonBody(text: string, status: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new LlmError('LLMResponseError', `response body is not JSON: ${text.slice(0, 200)}`, { status });
  }
}

function isEventStream(response: Response): boolean {
  return response.body !== null && (response.headers.get('content-type') ?? '').includes('text/event-stream');
}

/** The streamed answer, folded into the body a whole answer would have had; its pieces go to `onDelta` on the way. */
async function readStream(response: Response, call: Call): Promise<unknown> {
  const assembler = call.stream!.assembler();
  for await (const message of readSse(response.body!)) {
    if (message.data === '[DONE]') break;
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      throw new LlmError('LLMResponseError', `a streamed message is not JSON: ${message.data.slice(0, 200)}`, { status: response.status });
    }
    for (const delta of assembler.push(message.event, data)) call.onDelta?.(delta);
  }
  return assembler.body();
}

/** fetch reports network failures as "fetch failed"; the reason (ECONNREFUSED…) is in the cause. */
function networkReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause: unknown = error.cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return cause.message || code || cause.name;
  }
  return error.message;
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
