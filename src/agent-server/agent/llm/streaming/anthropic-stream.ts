/**
 * Anthropic Messages streamed (`stream: true`): `message_start`, then per content block a
 * `content_block_start`, its `content_block_delta`s (text, thinking, signature, tool input JSON)
 * and a `content_block_stop`, then `message_delta` (stop reason, output tokens) and `message_stop`.
 */
import { z } from 'zod';
import { LlmError } from '../llm-error.js';
import type { LlmDelta, StreamAssembler } from './delta.js';

type Block = Record<string, unknown> & { type: string };

const EventSchema = z.looseObject({
  type: z.string(),
  index: z.number().int().nonnegative().optional(),
  message: z.looseObject({ usage: z.record(z.string(), z.unknown()).nullish() }).optional(),
  content_block: z.looseObject({ type: z.string() }).optional(),
  delta: z.looseObject({}).optional(),
  usage: z.record(z.string(), z.unknown()).nullish(),
  error: z.looseObject({ type: z.string().optional(), message: z.string().optional() }).optional(),
});

export function anthropicAssembler(): StreamAssembler {
  let message: Record<string, unknown> = {};
  let usage: Record<string, unknown> = {};
  const blocks = new Map<number, Block>();
  const toolInputs = new Map<number, string>();
  const toolOrder = new Map<number, number>();
  return {
    push(_event, data) {
      const parsed = EventSchema.safeParse(data);
      if (!parsed.success) return [];
      const event = parsed.data;
      const index = event.index ?? 0;
      switch (event.type) {
        case 'message_start':
          message = { ...event.message };
          usage = { ...event.message?.usage };
          return [];
        case 'content_block_start': {
          const block = { ...event.content_block } as Block;
          blocks.set(index, block);
          if (block.type !== 'tool_use') return [];
          toolOrder.set(index, toolOrder.size);
          toolInputs.set(index, '');
          return [{ type: 'tool_call', index: toolOrder.get(index) ?? 0, id: typeof block.id === 'string' ? block.id : null, name: typeof block.name === 'string' ? block.name : null, arguments: '' }];
        }
        case 'content_block_delta':
          return applyDelta(index, event.delta ?? {});
        case 'message_delta':
          message = { ...message, ...event.delta };
          usage = { ...usage, ...event.usage };
          return [];
        case 'error':
          throw new LlmError('LLMResponseError', `the stream ended with an error: ${event.error?.type ?? 'error'}: ${event.error?.message ?? ''}`);
        default:
          return [];
      }
    },
    body() {
      const content = [...blocks.entries()]
        .sort(([a], [b]) => a - b)
        .map(([index, block]) => (block.type === 'tool_use' ? { ...block, input: inputOf(toolInputs.get(index) ?? '', block.input) } : block));
      return { ...message, content, usage };
    },
  };

  function applyDelta(index: number, delta: Record<string, unknown>): LlmDelta[] {
    const block = blocks.get(index);
    if (block === undefined) return [];
    const piece = (field: string): string => (typeof delta[field] === 'string' ? (delta[field] as string) : '');
    switch (delta.type) {
      case 'text_delta':
        block.text = String(block.text ?? '') + piece('text');
        return piece('text') === '' ? [] : [{ type: 'content', text: piece('text') }];
      case 'thinking_delta':
        block.thinking = String(block.thinking ?? '') + piece('thinking');
        return piece('thinking') === '' ? [] : [{ type: 'reasoning', text: piece('thinking') }];
      case 'signature_delta':
        block.signature = String(block.signature ?? '') + piece('signature');
        return [];
      case 'input_json_delta':
        toolInputs.set(index, (toolInputs.get(index) ?? '') + piece('partial_json'));
        return [{ type: 'tool_call', index: toolOrder.get(index) ?? 0, id: null, name: null, arguments: piece('partial_json') }];
      default:
        return [];
    }
  }
}

/** A tool call with no input streamed keeps the input its start block named (`{}`). */
function inputOf(json: string, started: unknown): unknown {
  if (json === '') return started ?? {};
  try {
    return JSON.parse(json);
  } catch {
    return {};
  }
}
