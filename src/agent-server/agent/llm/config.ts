/**
 * One model configuration as the client takes it: OpenHands' LLM fields, with durations in
 * milliseconds. `llmConfigFrom` reads it from a conversation's `agent.llm`.
 */
import type { Llm } from '../../../contracts/agent-server/llm-settings.js';
import type { ProviderSettings } from './provider.js';

/** What changes the body of a call (the dialects read these). */
export interface CompletionOptions {
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number | null;
  seed?: number | null;
  /** `max_completion_tokens` (OpenAI), `max_tokens` (Anthropic, Azure), `max_output_tokens` (Responses), `num_predict` (Ollama). */
  max_output_tokens?: number | null;
  reasoning_effort?: string | null;
  reasoning_summary?: string | null;
  enable_encrypted_reasoning?: boolean | null;
  prompt_cache_retention?: string | null;
  extended_thinking_budget?: number | null;
  safety_settings?: Record<string, string>[] | null;
  /** Extra top-level body fields for proxies and custom servers; they never replace ours. */
  litellm_extra_body?: Record<string, unknown> | null;
  /** Cache breakpoints (`cache_control`) for models that take them. */
  caching_prompt?: boolean | null;
  /** False: every set sampling field is sent even where the model is not known to take it. */
  drop_params?: boolean | null;
  /** Images are left out of the messages. */
  disable_vision?: boolean | null;
  /** Message contents are sent as plain strings, never as lists of parts. */
  force_string_serializer?: boolean | null;
  /** False: tools are described in the prompt and calls read from the text (prompt-based tool calling). */
  native_tool_calling?: boolean | null;
  /** With prompt-based tool calling, no `stop` words are sent. */
  disable_stop_word?: boolean | null;
  /** Longest text of one message content; longer ones lose their middle. */
  max_message_chars?: number | null;
  /** The answer is streamed (where the dialect can), its pieces handed to the request's `onDelta`. */
  stream?: boolean | null;
}

/** `model`, a LiteLLM-style name, picks the provider by its prefix (see provider.ts). */
export interface LlmConfig extends CompletionOptions, ProviderSettings {
  extra_headers?: Record<string, string> | null;
  /** Prices that replace the price table's (see pricing.ts). */
  input_cost_per_token?: number | null;
  output_cost_per_token?: number | null;
  /** Per attempt. */
  timeout_ms?: number;
  /** Retries after the first attempt, for transient failures only. */
  max_retries?: number;
  retry_multiplier_ms?: number;
  retry_min_wait_ms?: number;
  retry_max_wait_ms?: number;
}

const seconds = (value: number | null | undefined): number | undefined => (typeof value === 'number' ? value * 1000 : undefined);

/** The client settings of an LLM as OpenHands describes one (timeout in seconds, num_retries, ...). */
export function llmConfigFrom(llm: Llm): LlmConfig {
  const {
    timeout,
    num_retries: numRetries,
    retry_multiplier: multiplier,
    retry_min_wait: minWait,
    retry_max_wait: maxWait,
    ...rest
  } = llm;
  const optional = <T>(value: T | null | undefined): T | undefined => value ?? undefined;
  return {
    ...rest,
    timeout_ms: seconds(timeout),
    max_retries: optional(numRetries),
    retry_multiplier_ms: seconds(multiplier),
    retry_min_wait_ms: seconds(minWait),
    retry_max_wait_ms: seconds(maxWait),
  };
}
