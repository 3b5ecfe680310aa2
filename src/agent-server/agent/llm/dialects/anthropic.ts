/**
 * Anthropic's Messages API (`anthropic/...`): system prompt apart, tool results as user blocks,
 * signed thinking blocks sent back as they came, `cache_control` breakpoints when `caching_prompt`
 * is on, and extended thinking with a token budget.
 */
import { z } from 'zod';
import type { ChatContentPart, ChatMessage, ChatTool } from '../chat-messages.js';
import { LlmError } from '../llm-error.js';
import type { LlmResponse, LlmUsage, ParseContext } from '../response.js';
import { thinkingBlock } from '../response.js';
import { defined, withExtraBody, type Dialect } from './dialect.js';
import { anthropicAssembler } from '../streaming/anthropic-stream.js';

type Block = Record<string, unknown> & { type: string };
interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

/** Anthropic wants max_tokens; this is what we ask for when the settings name none. */
const DEFAULT_MAX_TOKENS = 16_384;
/** Anthropic's smallest thinking budget. */
const MIN_THINKING_BUDGET = 1024;
const EPHEMERAL = { type: 'ephemeral' } as const;

export const anthropicMessages: Dialect = {
  body({ config, features, route, messages, tools, stop }) {
    const maxTokens = config.max_output_tokens ?? DEFAULT_MAX_TOKENS;
    // The budget must stay below max_tokens: a larger one is lowered to fit.
    const budget = features.extendedThinking && config.extended_thinking_budget ? Math.min(config.extended_thinking_budget, maxTokens - 1) : 0;
    const thinking = budget >= MIN_THINKING_BUDGET ? { type: 'enabled', budget_tokens: budget } : undefined;
    const caching = config.caching_prompt === true;
    const { system, conversation } = anthropicConversation(messages, caching);
    const anthropicTools = tools?.map((tool, index) => anthropicTool(tool, caching && index === tools.length - 1));
    return withExtraBody(
      config,
      defined({
        // Anthropic refuses sampling settings while thinking.
        temperature: thinking ? undefined : config.temperature,
        top_p: thinking ? undefined : config.top_p,
        top_k: thinking ? undefined : config.top_k,
        thinking,
        model: route.model,
        max_tokens: maxTokens,
        stop_sequences: stop,
        system: system.length > 0 ? system : undefined,
        messages: conversation,
        ...(anthropicTools !== undefined && anthropicTools.length > 0 ? { tools: anthropicTools, tool_choice: { type: 'auto' } } : {}),
      }),
    );
  },
  headers({ config, features }): Record<string, string> {
    return features.extendedThinking && config.extended_thinking_budget ? { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } : {};
  },
  parse: parseAnthropicMessage,
  stream: { fields: { stream: true }, assembler: anthropicAssembler },
};

function anthropicTool(tool: ChatTool, cacheBreakpoint: boolean): Record<string, unknown> {
  return {
    name: tool.function.name,
    ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
    input_schema: tool.function.parameters,
    ...(cacheBreakpoint ? { cache_control: EPHEMERAL } : {}),
  };
}

/**
 * Chat messages as Anthropic turns: system text apart, tool results as `tool_result` blocks of a
 * user turn, and consecutive turns of one role merged (Anthropic wants them alternating).
 */
export function anthropicConversation(messages: readonly ChatMessage[], caching: boolean): { system: Block[]; conversation: AnthropicMessage[] } {
  const system: Block[] = [];
  const conversation: AnthropicMessage[] = [];
  const push = (role: AnthropicMessage['role'], blocks: Block[]): void => {
    if (blocks.length === 0) return;
    const last = conversation.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else conversation.push({ role, content: blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        system.push(...contentBlocks(message.content));
        break;
      case 'user':
        push('user', contentBlocks(message.content));
        break;
      case 'tool':
        push('user', [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: contentBlocks(message.content) }]);
        break;
      case 'assistant': {
        const blocks: Block[] = [...(message.thinking_blocks ?? []).map((block) => ({ ...block }) as Block)];
        blocks.push(...contentBlocks(message.content ?? ''));
        for (const call of message.tool_calls ?? []) {
          blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input: argumentsObject(call.function.arguments) });
        }
        push('assistant', blocks);
        break;
      }
    }
  }
  if (caching) {
    markLast(system);
    conversation.filter((turn) => turn.role === 'user').slice(-2).forEach((turn) => markLast(turn.content));
  }
  return { system, conversation };
}

function markLast(blocks: Block[]): void {
  const last = blocks.at(-1);
  if (last !== undefined) blocks[blocks.length - 1] = { ...last, cache_control: EPHEMERAL };
}

/** Empty texts are dropped: Anthropic refuses empty text blocks. */
function contentBlocks(content: string | readonly ChatContentPart[]): Block[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return content.flatMap((part): Block[] => {
    if (part.type === 'text') return part.text === '' ? [] : [{ type: 'text', text: part.text, ...(part.cache_control ? { cache_control: part.cache_control } : {}) }];
    return [{ type: 'image', source: imageSource(part.image_url.url) }];
  });
}

function imageSource(url: string): Record<string, string> {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return data ? { type: 'base64', media_type: data[1] ?? 'image/png', data: data[2] ?? '' } : { type: 'url', url };
}

function argumentsObject(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

const MessageSchema = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  stop_reason: z.string().nullish(),
  content: z.array(z.looseObject({ type: z.string() })),
  usage: z
    .object({
      input_tokens: z.number().nullish(),
      output_tokens: z.number().nullish(),
      cache_read_input_tokens: z.number().nullish(),
      cache_creation_input_tokens: z.number().nullish(),
    })
    .nullish(),
});

const STOP_REASONS: Readonly<Record<string, string>> = { end_turn: 'stop', tool_use: 'tool_calls', max_tokens: 'length', stop_sequence: 'stop' };

export function parseAnthropicMessage(raw: unknown, context: ParseContext): LlmResponse {
  const parsed = MessageSchema.safeParse(raw);
  if (!parsed.success) throw new LlmError('LLMResponseError', `malformed Anthropic message: ${z.prettifyError(parsed.error)}`);
  const message = parsed.data;
  const texts: string[] = [];
  const response: LlmResponse = {
    id: message.id ?? `msg_${context.newId()}`,
    model: message.model ?? context.model,
    content: null,
    tool_calls: [],
    reasoning_content: null,
    thinking_blocks: [],
    responses_reasoning_item: null,
    finish_reason: message.stop_reason ? (STOP_REASONS[message.stop_reason] ?? message.stop_reason) : null,
    usage: anthropicUsage(message.usage),
    raw,
  };
  for (const block of message.content) {
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'thinking' || block.type === 'redacted_thinking') response.thinking_blocks.push(...thinkingBlock(block));
    else if (block.type === 'tool_use' && typeof block.name === 'string') {
      response.tool_calls.push({
        id: typeof block.id === 'string' ? block.id : `toolu_${context.newId()}`,
        name: block.name,
        arguments: JSON.stringify(block.input ?? {}),
        origin: 'completion',
      });
    }
  }
  response.content = texts.length > 0 ? texts.join('') : null;
  const thoughts = response.thinking_blocks.flatMap((block) => (block.type === 'thinking' ? [block.thinking] : []));
  response.reasoning_content = thoughts.length > 0 ? thoughts.join('\n') : null;
  return response;
}

/** LiteLLM's reading: prompt tokens count the cached ones too, as OpenAI's do. */
function anthropicUsage(usage: z.infer<typeof MessageSchema>['usage']): LlmUsage | null {
  if (!usage) return null;
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  const prompt = (usage.input_tokens ?? 0) + cacheRead + cacheWrite;
  const completion = usage.output_tokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
    reasoning_tokens: 0,
  };
}
