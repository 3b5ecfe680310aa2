/**
 * OpenAI Chat Completions, also spoken by Azure deployments, OpenRouter, Gemini's OpenAI endpoint,
 * LiteLLM proxies, vLLM and most self-hosted servers. Following OpenHands: reasoning models get
 * `reasoning_effort` and no temperature or top_p; Claude models behind a gateway get `thinking`
 * with the budget and cache breakpoints.
 */
import type { ChatContentPart, ChatMessage } from '../chat-messages.js';
import { parseChatCompletion } from '../response.js';
import { openAiChatAssembler } from '../streaming/openai-chat-stream.js';
import { defined, withExtraBody, type Dialect, type DialectRequest } from './dialect.js';
import { toolImagesAsUserMessages } from './tool-images.js';

const INTERLEAVED_THINKING_BETA = 'interleaved-thinking-2025-05-14';

export const openAiChat: Dialect = {
  body(request) {
    const { config, features, route, tools } = request;
    const sendAll = config.drop_params === false;
    const thinking = thinkingOf(request);
    const dropSampling = (features.reasoningEffort || thinking !== undefined) && !sendAll;
    const maxTokensField = route.provider === 'azure' || thinking !== undefined ? 'max_tokens' : 'max_completion_tokens';
    const name = route.model.toLowerCase();
    return withExtraBody(
      config,
      defined({
        temperature: dropSampling ? undefined : config.temperature,
        top_p: dropSampling ? undefined : config.top_p,
        // OpenAI itself refuses top_k; the servers behind other prefixes take it.
        top_k: route.provider === 'openai' && !sendAll ? undefined : config.top_k,
        seed: config.seed,
        stop: request.stop,
        [maxTokensField]: config.max_output_tokens,
        reasoning_effort: features.reasoningEffort || sendAll ? config.reasoning_effort : undefined,
        thinking,
        prompt_cache_retention: features.promptCacheRetention || sendAll ? config.prompt_cache_retention : undefined,
        safety_settings: /mistral|gemini/.test(name) || sendAll ? config.safety_settings : undefined,
        model: route.model,
        messages: withCaching(request, toolImagesAsUserMessages(request.messages)),
        ...(tools !== undefined && tools.length > 0 ? { tools, tool_choice: 'auto' } : {}),
      }),
    );
  },
  headers(request): Record<string, string> {
    return thinkingOf(request) === undefined ? {} : { 'anthropic-beta': INTERLEAVED_THINKING_BETA };
  },
  parse: parseChatCompletion,
  // Usage comes in a last chunk only when asked for.
  stream: { fields: { stream: true, stream_options: { include_usage: true } }, assembler: openAiChatAssembler },
};

function withCaching({ config, features }: DialectRequest, messages: ChatMessage[]): ChatMessage[] {
  return config.caching_prompt && features.cacheControl ? withCacheBreakpoints(messages) : messages;
}

function thinkingOf({ config, features }: DialectRequest): { type: 'enabled'; budget_tokens: number } | undefined {
  const budget = config.extended_thinking_budget;
  if (!features.extendedThinking || !budget) return undefined;
  return { type: 'enabled', budget_tokens: budget };
}

/**
 * Anthropic caches the prompt up to each marked block: the system prompt and the last two user
 * or tool turns are marked (at most four breakpoints are allowed), so each call reads the previous
 * call's prefix from the cache.
 */
export function withCacheBreakpoints(messages: readonly ChatMessage[]): ChatMessage[] {
  const marked = new Set<number>();
  const systemIndex = messages.findIndex((message) => message.role === 'system');
  if (systemIndex !== -1) marked.add(systemIndex);
  const turns = messages.flatMap((message, index) => (message.role === 'user' || message.role === 'tool' ? [index] : []));
  for (const index of turns.slice(-2)) marked.add(index);
  return messages.map((message, index) => (marked.has(index) ? markLastPart(message) : message));
}

function markLastPart(message: ChatMessage): ChatMessage {
  const content = message.content;
  if (content === null || content === '') return message;
  const parts: ChatContentPart[] = typeof content === 'string' ? [{ type: 'text', text: content }] : [...(content as ChatContentPart[])];
  const lastText = parts.findLastIndex((part) => part.type === 'text');
  const part = parts[lastText];
  if (part === undefined || part.type !== 'text') return message;
  parts[lastText] = { ...part, cache_control: { type: 'ephemeral' } };
  return { ...message, content: parts } as ChatMessage;
}
