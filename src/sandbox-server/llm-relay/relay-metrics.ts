import { Counter, type Registry } from 'prom-client';
import { LLM_RELAY_VERDICTS } from '../../contracts/llm-providers.js';
import type { TokenCounts } from './token-usage.js';

/** How a relayed call ended: answered by the provider (2xx or not), or refused by the relay itself and why. */
export const RELAY_OUTCOMES = ['answered', 'provider_error', ...LLM_RELAY_VERDICTS] as const;
export type RelayOutcome = (typeof RELAY_OUTCOMES)[number];

export interface RelayMetrics {
  countCall(outcome: RelayOutcome): void;
  countTokens(tokens: TokenCounts): void;
}

/**
 * The relay's counters, by outcome and kind only (a sandbox's own counts are on its conversations'
 * routes, shown as the sandbox's `llm_usage`): ids as labels would make a series each.
 */
export function createRelayMetrics(registry: Registry): RelayMetrics {
  const calls = new Counter({ name: 'sandbox_server_llm_relay_calls_total', help: 'LLM calls through the relay, by outcome', labelNames: ['outcome'], registers: [registry] });
  const tokens = new Counter({ name: 'sandbox_server_llm_relay_tokens_total', help: 'Tokens the providers reported for relayed calls, by kind (input, output)', labelNames: ['kind'], registers: [registry] });
  for (const outcome of RELAY_OUTCOMES) calls.inc({ outcome }, 0);
  return {
    countCall: (outcome) => calls.inc({ outcome }),
    countTokens: ({ input, output }) => {
      tokens.inc({ kind: 'input' }, input);
      tokens.inc({ kind: 'output' }, output);
    },
  };
}
