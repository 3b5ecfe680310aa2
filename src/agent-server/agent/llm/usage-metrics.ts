/**
 * What a conversation's LLM calls used and cost, in OpenHands' shapes: ConversationStats maps each
 * LLM's usage_id (`agent`, `condenser`) to its Metrics (accumulated cost and tokens, and one entry
 * per call: cost, latency in seconds, token usage). Pure: the runner keeps the value and saves it.
 */
import type { ConversationStats, Metrics, MetricsSnapshot, TokenUsage } from '../../../contracts/agent-server/llm-metrics.js';
import type { LlmUsage } from './response.js';

export type { ConversationStats, Metrics, MetricsSnapshot };

export interface CallRecord {
  usageId: string;
  model: string;
  responseId: string;
  usage: LlmUsage | null;
  cost: number;
  latencyMs: number;
  maxBudgetPerTask: number | null;
  /** Seconds since the epoch. */
  at: number;
}

function tokenUsage(model: string, usage: LlmUsage | null, responseId: string): TokenUsage {
  const prompt = usage?.prompt_tokens ?? 0;
  const completion = usage?.completion_tokens ?? 0;
  return {
    model,
    prompt_tokens: prompt,
    completion_tokens: completion,
    cache_read_tokens: usage?.cache_read_tokens ?? 0,
    cache_write_tokens: usage?.cache_write_tokens ?? 0,
    reasoning_tokens: usage?.reasoning_tokens ?? 0,
    context_window: 0,
    per_turn_token: prompt + completion,
    response_id: responseId,
  };
}

export function emptyMetrics(model: string, maxBudgetPerTask: number | null): Metrics {
  return {
    model_name: model,
    accumulated_cost: 0,
    max_budget_per_task: maxBudgetPerTask,
    accumulated_token_usage: tokenUsage(model, null, ''),
    costs: [],
    response_latencies: [],
    token_usages: [],
  };
}

/** The stats with one more call counted (a new value; the old one is left as it was). */
export function withCall(stats: ConversationStats, call: CallRecord): ConversationStats {
  const before = stats.usage_to_metrics[call.usageId] ?? emptyMetrics(call.model, call.maxBudgetPerTask);
  const usage = tokenUsage(call.model, call.usage, call.responseId);
  const total = before.accumulated_token_usage;
  const metrics: Metrics = {
    ...before,
    accumulated_cost: before.accumulated_cost + call.cost,
    max_budget_per_task: call.maxBudgetPerTask,
    accumulated_token_usage: {
      ...total,
      prompt_tokens: total.prompt_tokens + usage.prompt_tokens,
      completion_tokens: total.completion_tokens + usage.completion_tokens,
      cache_read_tokens: total.cache_read_tokens + usage.cache_read_tokens,
      cache_write_tokens: total.cache_write_tokens + usage.cache_write_tokens,
      reasoning_tokens: total.reasoning_tokens + usage.reasoning_tokens,
      per_turn_token: usage.per_turn_token,
    },
    costs: call.cost > 0 ? [...before.costs, { model: call.model, cost: call.cost, timestamp: call.at }] : before.costs,
    response_latencies: [...before.response_latencies, { model: call.model, latency: call.latencyMs / 1000, response_id: call.responseId }],
    token_usages: call.usage ? [...before.token_usages, usage] : before.token_usages,
  };
  return { usage_to_metrics: { ...stats.usage_to_metrics, [call.usageId]: metrics } };
}

/** The cost of every LLM of the conversation together. */
export function totalCost(stats: ConversationStats): number {
  return Object.values(stats.usage_to_metrics).reduce((sum, metrics) => sum + metrics.accumulated_cost, 0);
}

/** OpenHands' combined snapshot of all LLMs (ConversationInfo.metrics); null before the first call. */
export function combinedMetrics(stats: ConversationStats): MetricsSnapshot | null {
  const all = Object.values(stats.usage_to_metrics);
  const [first] = all;
  if (first === undefined) return null;
  const sum = (pick: (usage: TokenUsage) => number) => all.reduce((total, metrics) => total + pick(metrics.accumulated_token_usage), 0);
  return {
    model_name: first.model_name,
    accumulated_cost: totalCost(stats),
    max_budget_per_task: first.max_budget_per_task,
    accumulated_token_usage: {
      ...first.accumulated_token_usage,
      prompt_tokens: sum((usage) => usage.prompt_tokens),
      completion_tokens: sum((usage) => usage.completion_tokens),
      cache_read_tokens: sum((usage) => usage.cache_read_tokens),
      cache_write_tokens: sum((usage) => usage.cache_write_tokens),
      reasoning_tokens: sum((usage) => usage.reasoning_tokens),
    },
  };
}
