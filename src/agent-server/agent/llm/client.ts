import { randomUUID } from 'node:crypto';
import { logger } from '../../../logger.js';
import type { ChatMessage, ChatTool } from './chat-messages.js';
import { errorFromHttpStatus, LlmError } from './llm-error.js';
import { buildChatCompletionBody, chatCompletionsUrl, type CompletionOptions } from './request-body.js';
import { parseChatCompletion, type LlmResponse } from './response.js';
import { parseRetryAfterMs, retryDelayMs } from './retry-delay.js';

/** One model configuration, in OpenHands' LLM field names (durations in milliseconds). */
export interface LlmConfig extends CompletionOptions {
  /** A LiteLLM-style name; see endpointModelName for the prefixes we strip. */
  model: string;
  base_url?: string | null;
  api_key?: string | null;
  /** Per attempt. */
  timeout_ms?: number;
  /** Retries after the first attempt, for transient failures only. */
  max_retries?: number;
  retry_min_wait_ms?: number;
  retry_max_wait_ms?: number;
  extra_headers?: Record<string, string> | null;
}

export interface LlmRequest {
  messages: ChatMessage[];
  tools?: ChatTool[];
  /** Aborting stops the call at once, retries included; `complete` then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface LlmClient {
  /** Resolves with the model's answer or rejects with an LlmError (or the abort reason). */
  complete(request: LlmRequest): Promise<LlmResponse>;
}

export interface LlmClientDeps {
  fetch?: typeof fetch;
  /** Waits between retries; must reject with the signal's reason when it aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** OpenHands' retry schedule (5 retries, 8 s doubling up to 64 s); its timeout is longer (300 s). */
export const LLM_DEFAULTS = {
  base_url: 'https://api.openai.com/v1',
  timeout_ms: 120_000,
  max_retries: 5,
  retry_min_wait_ms: 8_000,
  retry_max_wait_ms: 64_000,
} as const;

const log = logger.child({ component: 'llm' });

/**
 * A client of one OpenAI-compatible chat completions endpoint. It retries rate limits, 5xx,
 * timeouts and network failures with backoff, and fails at once on other 4xx. The api key goes
 * into the Authorization header only: it is never logged, and it is cut out of every error detail
 * (a server may echo it back in its error message).
 */
export function createLlmClient(config: LlmConfig, deps: LlmClientDeps = {}): LlmClient {
  const fetchImpl = deps.fetch ?? fetch;
  const sleep = deps.sleep ?? abortableSleep;
  const timeoutMs = config.timeout_ms ?? LLM_DEFAULTS.timeout_ms;
  const maxRetries = config.max_retries ?? LLM_DEFAULTS.max_retries;
  const backoff = {
    minWaitMs: config.retry_min_wait_ms ?? LLM_DEFAULTS.retry_min_wait_ms,
    maxWaitMs: config.retry_max_wait_ms ?? LLM_DEFAULTS.retry_max_wait_ms,
  };
  const apiKey = config.api_key || null;
  const headers: Record<string, string> = {
    ...config.extra_headers,
    'content-type': 'application/json',
    accept: 'application/json',
    ...(apiKey !== null ? { authorization: `Bearer ${apiKey}` } : {}),
  };
  const withoutKey = (text: string): string => (apiKey === null ? text : text.replaceAll(apiKey, '[redacted]'));

  async function attempt(url: URL, body: string, signal: AbortSignal | undefined): Promise<LlmResponse> {
    const timeout = AbortSignal.timeout(timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await fetchImpl(url, {
        method: 'POST',
        headers,
        body,
        signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
      });
      text = await response.text();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted) throw new LlmError('LLMTimeoutError', `no answer from ${url.href} within ${timeoutMs} ms`);
      throw new LlmError('LLMConnectionError', `could not reach ${url.href}: ${networkReason(error)}`);
    }
    if (!response.ok) {
      const retryAfterMs = parseRetryAfterMs(response.headers, Date.now());
      throw errorFromHttpStatus(response.status, response.statusText, text, retryAfterMs);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new LlmError('LLMResponseError', `response body is not JSON: ${text.slice(0, 200)}`, { status: response.status });
    }
    return parseChatCompletion(json, { model: config.model, newId: randomUUID });
  }

  return {
    async complete({ messages, tools, signal }) {
      const url = chatCompletionsUrl(config.base_url ?? LLM_DEFAULTS.base_url);
      const body = JSON.stringify(buildChatCompletionBody(config.model, config, messages, tools));
      for (let attempts = 1; ; attempts++) {
        try {
          return await attempt(url, body, signal);
        } catch (error) {
          if (!(error instanceof LlmError)) throw error;
          const failure = error.withDetail(withoutKey(error.detail));
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
