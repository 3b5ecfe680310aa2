/**
 * What a call cost, in US dollars, from a price table per model (LiteLLM's prices, per token).
 * `input_cost_per_token` and `output_cost_per_token` in a conversation's LLM settings replace the
 * table's prices (and price models the table does not know). Cached prompt tokens are billed at
 * the cache-read price and cache writes at the cache-write price where the provider has them.
 */
import type { LlmUsage } from './response.js';

export interface ModelPrice {
  input: number;
  output: number;
  /** Per cached prompt token read; the input price when absent. */
  cacheRead?: number;
  /** Per prompt token written to the cache; the input price when absent. */
  cacheWrite?: number;
}

const M = 1e-6;

/** Matched against the model name without its provider prefix; the first pattern that matches wins. */
const PRICES: readonly [RegExp, ModelPrice][] = [
  [/claude-(opus-4-5|opus-4\.5)/, { input: 5 * M, output: 25 * M, cacheRead: 0.5 * M, cacheWrite: 6.25 * M }],
  [/claude-(3-opus|opus-4)/, { input: 15 * M, output: 75 * M, cacheRead: 1.5 * M, cacheWrite: 18.75 * M }],
  [/claude-(3-5-sonnet|3\.5-sonnet|3-7-sonnet|sonnet-4)/, { input: 3 * M, output: 15 * M, cacheRead: 0.3 * M, cacheWrite: 3.75 * M }],
  [/claude-(haiku-4|4-5-haiku)/, { input: 1 * M, output: 5 * M, cacheRead: 0.1 * M, cacheWrite: 1.25 * M }],
  [/claude-3-5-haiku/, { input: 0.8 * M, output: 4 * M, cacheRead: 0.08 * M, cacheWrite: 1 * M }],
  [/gpt-5-mini/, { input: 0.25 * M, output: 2 * M, cacheRead: 0.025 * M }],
  [/gpt-5-nano/, { input: 0.05 * M, output: 0.4 * M, cacheRead: 0.005 * M }],
  [/gpt-5/, { input: 1.25 * M, output: 10 * M, cacheRead: 0.125 * M }],
  [/gpt-4\.1-mini/, { input: 0.4 * M, output: 1.6 * M, cacheRead: 0.1 * M }],
  [/gpt-4\.1/, { input: 2 * M, output: 8 * M, cacheRead: 0.5 * M }],
  [/gpt-4o-mini/, { input: 0.15 * M, output: 0.6 * M, cacheRead: 0.075 * M }],
  [/gpt-4o/, { input: 2.5 * M, output: 10 * M, cacheRead: 1.25 * M }],
  [/^o4-mini|^o3-mini/, { input: 1.1 * M, output: 4.4 * M, cacheRead: 0.275 * M }],
  [/^o3/, { input: 2 * M, output: 8 * M, cacheRead: 0.5 * M }],
  [/gemini-2\.5-pro/, { input: 1.25 * M, output: 10 * M, cacheRead: 0.31 * M }],
  [/gemini-2\.5-flash/, { input: 0.3 * M, output: 2.5 * M, cacheRead: 0.075 * M }],
  [/deepseek-chat|deepseek-v3/, { input: 0.27 * M, output: 1.1 * M, cacheRead: 0.07 * M }],
  [/deepseek-reasoner/, { input: 0.55 * M, output: 2.19 * M, cacheRead: 0.14 * M }],
];

export interface PriceOverrides {
  input_cost_per_token?: number | null;
  output_cost_per_token?: number | null;
}

/** The price of a model; null when neither the table nor the overrides price it (its calls cost 0). */
export function priceOf(model: string, overrides: PriceOverrides = {}): ModelPrice | null {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  const listed = PRICES.find(([pattern]) => pattern.test(name))?.[1] ?? null;
  const overridden = overrides.input_cost_per_token != null || overrides.output_cost_per_token != null;
  if (listed === null && !overridden) return null;
  // A model the table does not know is free on the side the overrides leave out.
  const input = overrides.input_cost_per_token ?? listed?.input ?? 0;
  const output = overrides.output_cost_per_token ?? listed?.output ?? 0;
  // An overridden input price also prices the cache, unless the table knows better for that model.
  return { input, output, cacheRead: overrides.input_cost_per_token ? input : listed?.cacheRead, cacheWrite: overrides.input_cost_per_token ? input : listed?.cacheWrite };
}

/** Prompt tokens include the cached ones (as OpenAI and LiteLLM count them). */
export function callCost(price: ModelPrice | null, usage: LlmUsage | null): number {
  if (price === null || usage === null) return 0;
  const fresh = Math.max(0, usage.prompt_tokens - usage.cache_read_tokens - usage.cache_write_tokens);
  return (
    fresh * price.input +
    usage.cache_read_tokens * (price.cacheRead ?? price.input) +
    usage.cache_write_tokens * (price.cacheWrite ?? price.input) +
    usage.completion_tokens * price.output
  );
}
