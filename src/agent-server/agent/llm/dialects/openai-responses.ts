/**
 * OpenAI's Responses API, for the models that answer nowhere else (codex, the -pro models): the
 * system prompt as `instructions`, tool calls and their results as items, and the model's
 * reasoning item (encrypted, not stored by OpenAI) sent back as it came.
 */
import { z } from 'zod';
import type { ChatContentPart, ChatMessage, ReasoningItem } from '../chat-messages.js';
import { LlmError } from '../llm-error.js';
import type { LlmResponse, ParseContext } from '../response.js';
import { defined, withExtraBody, type Dialect } from './dialect.js';

type Item = Record<string, unknown>;

export const openAiResponses: Dialect = {
  body({ config, features, route, messages, tools }) {
    const sendAll = config.drop_params === false;
    const reasoning = features.reasoningEffort || sendAll;
    const encrypted = config.enable_encrypted_reasoning !== false;
    const { instructions, input } = responsesInput(messages);
    return withExtraBody(
      config,
      defined({
        temperature: reasoning && !sendAll ? undefined : config.temperature,
        top_p: reasoning && !sendAll ? undefined : config.top_p,
        max_output_tokens: config.max_output_tokens,
        reasoning: reasoning ? defined({ effort: config.reasoning_effort, summary: config.reasoning_summary }) : undefined,
        // Without storage the reasoning can only come back encrypted.
        include: encrypted ? ['reasoning.encrypted_content'] : undefined,
        store: encrypted ? false : undefined,
        prompt_cache_retention: features.promptCacheRetention || sendAll ? config.prompt_cache_retention : undefined,
        model: route.model,
        instructions: instructions === '' ? undefined : instructions,
        input,
        ...(tools !== undefined && tools.length > 0
          ? {
              tools: tools.map((tool) => ({
                type: 'function',
                name: tool.function.name,
                description: tool.function.description,
                parameters: tool.function.parameters,
                strict: false,
              })),
              tool_choice: 'auto',
            }
          : {}),
      }),
    );
  },
  parse: parseResponsesAnswer,
};

export function responsesInput(messages: readonly ChatMessage[]): { instructions: string; input: Item[] } {
  const instructions: string[] = [];
  const input: Item[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        instructions.push(plainText(message.content));
        break;
      case 'user':
        input.push({ role: 'user', content: inputParts(message.content) });
        break;
      case 'tool':
        input.push({ type: 'function_call_output', call_id: message.tool_call_id, output: toolOutput(message.content) });
        break;
      case 'assistant': {
        const item = message.responses_reasoning_item;
        if (item?.id) {
          input.push(defined({ type: 'reasoning', id: item.id, summary: (item.summary ?? []).map((text) => ({ type: 'summary_text', text })), encrypted_content: item.encrypted_content }));
        }
        const text = plainText(message.content ?? '');
        if (text !== '') input.push({ role: 'assistant', content: [{ type: 'output_text', text }] });
        for (const call of message.tool_calls ?? []) {
          input.push({ type: 'function_call', call_id: call.id, name: call.function.name, arguments: call.function.arguments });
        }
        break;
      }
    }
  }
  return { instructions: instructions.join('\n\n'), input };
}

function plainText(content: string | readonly ChatContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

/** Text alone as a string; with images, the list of input parts a function call's output may be. */
function toolOutput(content: string | readonly ChatContentPart[]): string | Item[] {
  if (typeof content === 'string' || content.every((part) => part.type === 'text')) return plainText(content);
  return inputParts(content);
}

function inputParts(content: string | readonly ChatContentPart[]): Item[] {
  if (typeof content === 'string') return [{ type: 'input_text', text: content }];
  return content.map((part) => (part.type === 'text' ? { type: 'input_text', text: part.text } : { type: 'input_image', image_url: part.image_url.url }));
}

const TextSchema = z.object({ text: z.string() });
const ResponseSchema = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  status: z.string().nullish(),
  output: z.array(z.looseObject({ type: z.string() })),
  usage: z
    .object({
      input_tokens: z.number(),
      output_tokens: z.number(),
      total_tokens: z.number().nullish(),
      input_tokens_details: z.object({ cached_tokens: z.number().nullish() }).nullish(),
      output_tokens_details: z.object({ reasoning_tokens: z.number().nullish() }).nullish(),
    })
    .nullish(),
});

export function parseResponsesAnswer(raw: unknown, context: ParseContext): LlmResponse {
  const parsed = ResponseSchema.safeParse(raw);
  if (!parsed.success) throw new LlmError('LLMResponseError', `malformed Responses answer: ${z.prettifyError(parsed.error)}`);
  const answer = parsed.data;
  const texts: string[] = [];
  const response: LlmResponse = {
    id: answer.id ?? `resp_${context.newId()}`,
    model: answer.model ?? context.model,
    content: null,
    tool_calls: [],
    reasoning_content: null,
    thinking_blocks: [],
    responses_reasoning_item: null,
    finish_reason: answer.status === 'incomplete' ? 'length' : 'stop',
    usage: null,
    raw,
  };
  for (const item of answer.output) {
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content) {
        const text = TextSchema.safeParse(part);
        if (text.success) texts.push(text.data.text);
      }
    } else if (item.type === 'function_call' && typeof item.name === 'string') {
      const id = typeof item.call_id === 'string' ? item.call_id : `call_${context.newId()}`;
      response.tool_calls.push({ id, name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : '{}', origin: 'responses' });
    } else if (item.type === 'reasoning') {
      response.responses_reasoning_item = reasoningItem(item);
    }
  }
  if (response.tool_calls.length > 0) response.finish_reason = 'tool_calls';
  response.content = texts.length > 0 ? texts.join('') : null;
  const summary = response.responses_reasoning_item?.summary ?? [];
  response.reasoning_content = summary.length > 0 ? summary.join('\n') : null;
  const usage = answer.usage;
  if (usage) {
    response.usage = {
      prompt_tokens: usage.input_tokens,
      completion_tokens: usage.output_tokens,
      total_tokens: usage.total_tokens ?? usage.input_tokens + usage.output_tokens,
      cache_read_tokens: usage.input_tokens_details?.cached_tokens ?? 0,
      cache_write_tokens: 0,
      reasoning_tokens: usage.output_tokens_details?.reasoning_tokens ?? 0,
    };
  }
  return response;
}

function reasoningItem(item: Record<string, unknown>): ReasoningItem {
  const texts = (value: unknown): string[] =>
    Array.isArray(value) ? value.flatMap((part) => {
      const text = TextSchema.safeParse(part);
      return text.success ? [text.data.text] : [];
    }) : [];
  return {
    id: typeof item.id === 'string' ? item.id : null,
    summary: texts(item.summary),
    content: Array.isArray(item.content) ? texts(item.content) : null,
    encrypted_content: typeof item.encrypted_content === 'string' ? item.encrypted_content : null,
    status: typeof item.status === 'string' ? item.status : null,
  };
}
