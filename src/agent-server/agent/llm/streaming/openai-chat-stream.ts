/**
 * OpenAI Chat Completions streamed (`stream: true`): `chat.completion.chunk` messages whose
 * `delta` carries content, reasoning and tool calls piece by piece, usage in the last chunk
 * (asked for with `stream_options.include_usage`).
 */
import { z } from 'zod';
import type { LlmDelta, StreamAssembler } from './delta.js';

const ChunkSchema = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullish(),
        delta: z
          .object({
            content: z.string().nullish(),
            reasoning_content: z.string().nullish(),
            reasoning: z.string().nullish(),
            thinking_blocks: z.array(z.unknown()).nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().int().nonnegative().optional(),
                  id: z.string().nullish(),
                  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
      }),
    )
    .nullish(),
  usage: z.unknown().optional(),
});

interface CallSoFar {
  id: string | null;
  name: string;
  arguments: string;
}

export function openAiChatAssembler(): StreamAssembler {
  let id: string | null = null;
  let model: string | null = null;
  let content = '';
  let reasoning = '';
  let finishReason: string | null = null;
  let usage: unknown;
  const thinkingBlocks: unknown[] = [];
  const calls = new Map<number, CallSoFar>();
  return {
    push(_event, data) {
      const chunk = ChunkSchema.safeParse(data);
      if (!chunk.success) return [];
      const deltas: LlmDelta[] = [];
      id ??= chunk.data.id ?? null;
      model ??= chunk.data.model ?? null;
      if (chunk.data.usage !== undefined && chunk.data.usage !== null) usage = chunk.data.usage;
      const choice = chunk.data.choices?.[0];
      if (choice === undefined) return deltas;
      finishReason = choice.finish_reason ?? finishReason;
      const delta = choice.delta;
      if (!delta) return deltas;
      const thought = delta.reasoning_content ?? delta.reasoning;
      if (thought) {
        reasoning += thought;
        deltas.push({ type: 'reasoning', text: thought });
      }
      if (delta.content) {
        content += delta.content;
        deltas.push({ type: 'content', text: delta.content });
      }
      thinkingBlocks.push(...(delta.thinking_blocks ?? []));
      for (const [position, part] of (delta.tool_calls ?? []).entries()) {
        const index = part.index ?? position;
        const call = calls.get(index) ?? { id: null, name: '', arguments: '' };
        call.id ??= part.id ?? null;
        call.name += part.function?.name ?? '';
        call.arguments += part.function?.arguments ?? '';
        calls.set(index, call);
        deltas.push({ type: 'tool_call', index, id: part.id ?? null, name: part.function?.name ?? null, arguments: part.function?.arguments ?? '' });
      }
      return deltas;
    },
    body() {
      const toolCalls = [...calls.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, call]) => ({ ...(call.id !== null ? { id: call.id } : {}), type: 'function', function: { name: call.name, arguments: call.arguments } }));
      return {
        ...(id !== null ? { id } : {}),
        ...(model !== null ? { model } : {}),
        choices: [
          {
            finish_reason: finishReason,
            message: {
              role: 'assistant',
              content: content === '' ? null : content,
              ...(reasoning !== '' ? { reasoning_content: reasoning } : {}),
              ...(thinkingBlocks.length > 0 ? { thinking_blocks: thinkingBlocks } : {}),
              ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            },
          },
        ],
        ...(usage !== undefined ? { usage } : {}),
      };
    },
  };
}
