/**
 * OpenHands' LLM metrics (openhands.sdk.llm.utils.metrics): a conversation's `stats` maps each
 * LLM's usage_id to its Metrics, and `metrics` is the snapshot of them all together. The control
 * plane reads the snapshot into its app conversations.
 */
import { z } from 'zod';

export const TokenUsageSchema = z.object({
  model: z.string(),
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  cache_read_tokens: z.number(),
  cache_write_tokens: z.number(),
  reasoning_tokens: z.number(),
  context_window: z.number(),
  per_turn_token: z.number(),
  response_id: z.string(),
});
export type TokenUsage = z.output<typeof TokenUsageSchema>;

export const MetricsSnapshotSchema = z.object({
  model_name: z.string(),
  accumulated_cost: z.number(),
  max_budget_per_task: z.number().nullable(),
  accumulated_token_usage: TokenUsageSchema,
});
export type MetricsSnapshot = z.output<typeof MetricsSnapshotSchema>;

export const MetricsSchema = MetricsSnapshotSchema.extend({
  costs: z.array(z.object({ model: z.string(), cost: z.number(), timestamp: z.number() })),
  response_latencies: z.array(z.object({ model: z.string(), latency: z.number(), response_id: z.string() })),
  token_usages: z.array(TokenUsageSchema),
});
export type Metrics = z.output<typeof MetricsSchema>;

export const ConversationStatsSchema = z.object({ usage_to_metrics: z.record(z.string(), MetricsSchema) });
export type ConversationStats = z.output<typeof ConversationStatsSchema>;
