import type { ChatMessage, ChatTool } from './chat-messages.js';
import { LlmError } from './llm-error.js';

/** Sampling and pass-through settings of one model configuration (OpenHands' LLM fields). */
export interface CompletionOptions {
  temperature?: number | null;
  top_p?: number | null;
  /** Sent as `max_completion_tokens`, the current OpenAI name (as the OpenHands SDK does). */
  max_output_tokens?: number | null;
  reasoning_effort?: string | null;
  /** Extra top-level body fields for proxies and custom servers (LiteLLM's `extra_body`). */
  extra_body?: Record<string, unknown> | null;
}

export interface ChatCompletionBody {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  tool_choice?: 'auto';
  [field: string]: unknown;
}

/**
 * Model names in OpenHands are LiteLLM names with a provider prefix. `openai/` and `litellm_proxy/`
 * both mean "an OpenAI-compatible endpoint", which wants the bare name, so those prefixes are
 * stripped as LiteLLM strips them. Any other prefix (`anthropic/claude-…`) is kept: we only speak
 * chat completions, and the gateways that front other providers (a LiteLLM proxy, OpenRouter) are
 * addressed with the prefixed name.
 */
export function endpointModelName(model: string): string {
  for (const prefix of ['openai/', 'litellm_proxy/']) {
    if (model.startsWith(prefix)) return model.slice(prefix.length);
  }
  return model;
}

/** `{base_url}/chat/completions`; a base_url that is not an http(s) URL is a bad request, not a crash. */
export function chatCompletionsUrl(baseUrl: string): URL {
  const endpoint = `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
  if (URL.canParse(endpoint)) {
    const url = new URL(endpoint);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  }
  throw new LlmError('LLMBadRequestError', `base_url is not an http(s) URL: ${JSON.stringify(baseUrl)}`);
}

/**
 * The JSON body of one call. `extra_body` goes first so that it can add fields but never replace
 * the model, the messages or the tools.
 */
export function buildChatCompletionBody(
  model: string,
  options: CompletionOptions,
  messages: ChatMessage[],
  tools: ChatTool[] | undefined,
): ChatCompletionBody {
  const sampling = {
    temperature: options.temperature,
    top_p: options.top_p,
    max_completion_tokens: options.max_output_tokens,
    reasoning_effort: options.reasoning_effort,
  };
  const setSampling = Object.fromEntries(Object.entries(sampling).filter(([, value]) => value !== undefined && value !== null));
  return {
    ...options.extra_body,
    ...setSampling,
    model: endpointModelName(model),
    messages,
    ...(tools !== undefined && tools.length > 0 ? { tools, tool_choice: 'auto' as const } : {}),
  };
}
