import { Counter, Histogram, type Registry } from 'prom-client';

/** One LLM call as the agent-server reports it. */
export interface LlmCallSample {
  model: string;
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** US dollars. */
  cost: number;
  latencySeconds: number;
}

/**
 * The agent-server's LLM counters, labelled by model (never by conversation: ids would make a
 * series each). Tokens are one counter with a `kind` label: prompt, completion, cache_read,
 * cache_write, reasoning.
 */
export function createLlmMetrics(registry: Registry): (sample: LlmCallSample) => void {
  const calls = new Counter({ name: 'llm_calls_total', help: 'LLM calls answered, by model', labelNames: ['model'], registers: [registry] });
  const tokens = new Counter({ name: 'llm_tokens_total', help: 'LLM tokens, by model and kind', labelNames: ['model', 'kind'], registers: [registry] });
  const cost = new Counter({ name: 'llm_cost_usd_total', help: 'What LLM calls cost in US dollars, by model (from the price table)', labelNames: ['model'], registers: [registry] });
  const latency = new Histogram({
    name: 'llm_call_duration_seconds',
    help: 'Time from sending an LLM request to its full answer, by model',
    labelNames: ['model'],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  return (sample) => {
    const model = { model: sample.model };
    calls.inc(model);
    const kinds: [string, number][] = [
      ['prompt', sample.promptTokens],
      ['completion', sample.completionTokens],
      ['cache_read', sample.cacheReadTokens],
      ['cache_write', sample.cacheWriteTokens],
      ['reasoning', sample.reasoningTokens],
    ];
    for (const [kind, count] of kinds) tokens.inc({ ...model, kind }, count);
    cost.inc(model, sample.cost);
    latency.observe(model, sample.latencySeconds);
  };
}
