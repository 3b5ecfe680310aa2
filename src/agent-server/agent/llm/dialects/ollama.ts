/**
 * Ollama's own chat API (`ollama/...`, `ollama_chat/...` at `/api/chat`): sampling settings in
 * `options`, images as base64 beside the text, tool arguments as objects, no tool call ids (we make
 * them), and token counts as `prompt_eval_count` and `eval_count`.
 */
import { z } from 'zod';
import type { ChatContentPart, ChatMessage } from '../chat-messages.js';
import { LlmError } from '../llm-error.js';
import type { LlmResponse, ParseContext } from '../response.js';
import { defined, withExtraBody, type Dialect } from './dialect.js';

export const ollamaChat: Dialect = {
  body({ config, features, route, messages, tools, stop }) {
    const options = defined({
      temperature: config.temperature,
      top_p: config.top_p,
      top_k: config.top_k,
      seed: config.seed,
      num_predict: config.max_output_tokens,
      stop,
    });
    const thinks = features.reasoningEffort || config.drop_params === false;
    return withExtraBody(
      config,
      defined({
        model: route.model,
        messages: messages.map(ollamaMessage),
        stream: false,
        options: Object.keys(options).length > 0 ? options : undefined,
        think: thinks && config.reasoning_effort ? config.reasoning_effort !== 'none' : undefined,
        ...(tools !== undefined && tools.length > 0 ? { tools } : {}),
      }),
    );
  },
  parse: parseOllamaAnswer,
};

function ollamaMessage(message: ChatMessage): Record<string, unknown> {
  const { text, images } = split(message.content ?? '');
  if (message.role === 'assistant') {
    return defined({
      role: 'assistant',
      content: text,
      thinking: message.reasoning_content,
      tool_calls: message.tool_calls?.map((call) => ({ function: { name: call.function.name, arguments: argumentsObject(call.function.arguments) } })),
    });
  }
  if (message.role === 'tool') return defined({ role: 'tool', content: text, images: images.length > 0 ? images : undefined });
  return defined({ role: message.role, content: text, images: images.length > 0 ? images : undefined });
}

function split(content: string | readonly ChatContentPart[]): { text: string; images: string[] } {
  if (typeof content === 'string') return { text: content, images: [] };
  const texts: string[] = [];
  const images: string[] = [];
  for (const part of content) {
    if (part.type === 'text') texts.push(part.text);
    else images.push(part.image_url.url.replace(/^data:[^,]*,/, ''));
  }
  return { text: texts.join('\n'), images };
}

function argumentsObject(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

const AnswerSchema = z.object({
  model: z.string().nullish(),
  created_at: z.string().nullish(),
  done_reason: z.string().nullish(),
  message: z.object({
    content: z.string().nullish(),
    thinking: z.string().nullish(),
    tool_calls: z
      .array(z.object({ function: z.object({ name: z.string(), arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish() }) }))
      .nullish(),
  }),
  prompt_eval_count: z.number().nullish(),
  eval_count: z.number().nullish(),
});

export function parseOllamaAnswer(raw: unknown, context: ParseContext): LlmResponse {
  const parsed = AnswerSchema.safeParse(raw);
  if (!parsed.success) throw new LlmError('LLMResponseError', `malformed Ollama answer: ${z.prettifyError(parsed.error)}`);
  const { message } = parsed.data;
  const toolCalls = (message.tool_calls ?? []).map((call) => ({
    id: `call_${context.newId()}`,
    name: call.function.name,
    arguments: typeof call.function.arguments === 'string' ? call.function.arguments : JSON.stringify(call.function.arguments ?? {}),
    origin: 'completion' as const,
  }));
  const prompt = parsed.data.prompt_eval_count ?? 0;
  const completion = parsed.data.eval_count ?? 0;
  return {
    id: `ollama-${context.newId()}`,
    model: parsed.data.model ?? context.model,
    content: message.content ? message.content : null,
    tool_calls: toolCalls,
    reasoning_content: message.thinking ?? null,
    thinking_blocks: [],
    responses_reasoning_item: null,
    finish_reason: toolCalls.length > 0 ? 'tool_calls' : (parsed.data.done_reason ?? 'stop'),
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
    raw,
  };
}
