import { z } from 'zod';
import type { ReasoningItem, RedactedThinkingBlock, ThinkingBlock } from './chat-messages.js';
import { LlmError } from './llm-error.js';

/** One function call the model asked for; the shape of the spec's MessageToolCall. */
export interface LlmToolCall {
  id: string;
  name: string;
  /** The arguments exactly as the model wrote them: a JSON string, possibly malformed. */
  arguments: string;
  /** Which API made the call: chat-style (`completion`) or OpenAI Responses. */
  origin: 'completion' | 'responses';
}

export interface LlmUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
}

export interface LlmResponse {
  /** The completion id; becomes llm_response_id of the events made from this response. */
  id: string;
  model: string;
  /** Assistant text; null when the model only called tools. */
  content: string | null;
  tool_calls: LlmToolCall[];
  reasoning_content: string | null;
  thinking_blocks: (ThinkingBlock | RedactedThinkingBlock)[];
  responses_reasoning_item: ReasoningItem | null;
  finish_reason: string | null;
  usage: LlmUsage | null;
  /** The parsed response body, for completion logs. */
  raw: unknown;
}

// Lenient on purpose: unknown fields are dropped, optional ones may be missing or null, because
// OpenAI-compatible servers differ in what they add and leave out.
const ContentPartSchema = z.object({ type: z.string(), text: z.string().optional() });

const ToolCallSchema = z.object({
  id: z.string().nullish(),
  function: z.object({
    name: z.string(),
    // Some servers send the arguments as an object rather than a JSON string.
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  }),
});

const ThinkingBlockSchema = z.union([
  z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().nullish() }),
  z.object({ type: z.literal('redacted_thinking'), data: z.string() }),
]);

const ChatCompletionSchema = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  choices: z.array(
    z.object({
      finish_reason: z.string().nullish(),
      message: z.object({
        content: z.union([z.string(), z.array(ContentPartSchema)]).nullish(),
        tool_calls: z.array(ToolCallSchema).nullish(),
        reasoning_content: z.string().nullish(),
        reasoning: z.string().nullish(),
        thinking_blocks: z.array(z.unknown()).nullish(),
      }),
    }),
  ),
  usage: z.unknown().optional(),
});

const UsageSchema = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number().nullish(),
  prompt_tokens_details: z.object({ cached_tokens: z.number().nullish() }).nullish(),
  // LiteLLM proxies report Anthropic's cache writes under their own name.
  cache_creation_input_tokens: z.number().nullish(),
  completion_tokens_details: z.object({ reasoning_tokens: z.number().nullish() }).nullish(),
});

export interface ParseContext {
  /** The model asked for; used when the server does not name one. */
  model: string;
  /** Makes the ids a server leaves out; they are required downstream (llm_response_id, tool_call_id). */
  newId: () => string;
}

/** Reads a 2xx chat completions body. A body of the wrong shape is an LlmError, never a crash. */
export function parseChatCompletion(raw: unknown, context: ParseContext): LlmResponse {
  const parsed = ChatCompletionSchema.safeParse(raw);
  if (!parsed.success) {
    throw new LlmError('LLMResponseError', `malformed chat completion response: ${z.prettifyError(parsed.error)}`);
  }
  const choice = parsed.data.choices[0];
  if (choice === undefined) throw new LlmError('LLMNoResponseError', 'the LLM returned no choices');
  const { message } = choice;
  const id = parsed.data.id ?? `chatcmpl-${context.newId()}`;
  return {
    id,
    model: parsed.data.model ?? context.model,
    content: textOf(message.content),
    tool_calls: (message.tool_calls ?? []).map((call) => ({
      id: call.id ?? `call_${context.newId()}`,
      name: call.function.name,
      arguments: argumentsText(call.function.arguments),
      origin: 'completion',
    })),
    reasoning_content: message.reasoning_content ?? message.reasoning ?? null,
    thinking_blocks: (message.thinking_blocks ?? []).flatMap(thinkingBlock),
    responses_reasoning_item: null,
    finish_reason: choice.finish_reason ?? null,
    usage: usageOf(parsed.data.usage),
    raw,
  };
}

function textOf(content: string | z.infer<typeof ContentPartSchema>[] | null | undefined): string | null {
  if (content === null || content === undefined) return null;
  if (typeof content === 'string') return content;
  const texts = content.flatMap((part) => (part.type === 'text' && part.text !== undefined ? [part.text] : []));
  return texts.length > 0 ? texts.join('') : null;
}

function argumentsText(value: string | Record<string, unknown> | null | undefined): string {
  if (value === null || value === undefined) return '{}';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Blocks of kinds we do not know are dropped rather than failing the whole response. */
export function thinkingBlock(value: unknown): (ThinkingBlock | RedactedThinkingBlock)[] {
  const parsed = ThinkingBlockSchema.safeParse(value);
  if (!parsed.success) return [];
  const block = parsed.data;
  return block.type === 'thinking' ? [{ type: 'thinking', thinking: block.thinking, signature: block.signature ?? null }] : [block];
}

/** Usage is bookkeeping: when a server reports it oddly we keep the answer and drop the usage. */
function usageOf(value: unknown): LlmUsage | null {
  const parsed = UsageSchema.safeParse(value);
  if (!parsed.success) return null;
  const usage = parsed.data;
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
    cache_read_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cache_write_tokens: usage.cache_creation_input_tokens ?? 0,
    reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}
