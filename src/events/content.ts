import { z } from 'zod';

export const TextContentSchema = z.strictObject({
  type: z.literal('text').default('text'),
  text: z.string(),
  cache_prompt: z.boolean().default(false),
});
export type TextContent = z.output<typeof TextContentSchema>;

export const ImageContentSchema = z.strictObject({
  type: z.literal('image').default('image'),
  image_urls: z.array(z.string()),
  cache_prompt: z.boolean().default(false),
});
export type ImageContent = z.output<typeof ImageContentSchema>;

/**
 * A plain union, not a discriminated one: `type` may be left out, and the required fields (text,
 * image_urls) of the strict objects still tell the two apart.
 */
export const ContentItemSchema = z.union([TextContentSchema, ImageContentSchema]);
export type ContentItem = z.output<typeof ContentItemSchema>;

export const ThinkingBlockSchema = z.strictObject({
  type: z.literal('thinking').default('thinking'),
  thinking: z.string(),
  signature: z.string().nullable().default(null),
});
export type ThinkingBlock = z.output<typeof ThinkingBlockSchema>;

export const RedactedThinkingBlockSchema = z.strictObject({
  type: z.literal('redacted_thinking').default('redacted_thinking'),
  data: z.string(),
});
export type RedactedThinkingBlock = z.output<typeof RedactedThinkingBlockSchema>;

export const AnyThinkingBlockSchema = z.union([ThinkingBlockSchema, RedactedThinkingBlockSchema]);

/** An OpenAI Responses reasoning item. `encrypted_content` must never be logged or rendered. */
export const ReasoningItemModelSchema = z.strictObject({
  id: z.string().nullable().default(null),
  summary: z.array(z.string()).default([]),
  content: z.array(z.string()).nullable().default(null),
  encrypted_content: z.string().nullable().default(null),
  status: z.string().nullable().default(null),
});
export type ReasoningItemModel = z.output<typeof ReasoningItemModelSchema>;

export const MessageToolCallSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  /** JSON-encoded arguments, kept as the LLM sent them. */
  arguments: z.string(),
  origin: z.enum(['completion', 'responses']),
});
export type MessageToolCall = z.output<typeof MessageToolCallSchema>;

export const MessageSchema = z.strictObject({
  role: z.enum(['user', 'system', 'assistant', 'tool']),
  content: z.array(ContentItemSchema).default([]),
  tool_calls: z.array(MessageToolCallSchema).nullable().default(null),
  tool_call_id: z.string().nullable().default(null),
  name: z.string().nullable().default(null),
  reasoning_content: z.string().nullable().default(null),
  thinking_blocks: z.array(AnyThinkingBlockSchema).default([]),
  responses_reasoning_item: ReasoningItemModelSchema.nullable().default(null),
});
export type Message = z.output<typeof MessageSchema>;
export type MessageInput = z.input<typeof MessageSchema>;
