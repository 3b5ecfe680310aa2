/**
 * Where a model's provider answers when no base_url is given, as LiteLLM and OpenHands name
 * providers: the prefix before the first `/` of a model name. The agent-server's LLM client picks
 * its endpoint with it, and the control plane's LLM relay (which sends the agent's calls on) picks
 * the same one, so that a conversation reaches the same provider through the relay as without it.
 */

/** Providers that speak OpenAI Chat Completions at a known address (null: base_url is required). */
export const OPENAI_COMPATIBLE_PROVIDERS: Readonly<Record<string, string | null>> = {
  openai: 'https://api.openai.com/v1',
  litellm_proxy: null,
  hosted_vllm: null,
  openai_like: null,
  openhands: 'https://llm-proxy.app.all-hands.dev',
  openrouter: 'https://openrouter.ai/api/v1',
  gemini: 'https://generativelanguage.googleapis.com/v1beta/openai',
  deepseek: 'https://api.deepseek.com/v1',
  groq: 'https://api.groq.com/openai/v1',
  mistral: 'https://api.mistral.ai/v1',
  xai: 'https://api.x.ai/v1',
  together_ai: 'https://api.together.xyz/v1',
  fireworks_ai: 'https://api.fireworks.ai/inference/v1',
  lm_studio: 'http://localhost:1234/v1',
};

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const OLLAMA_DEFAULT_BASE_URL = 'http://localhost:11434';
const OTHER_PROVIDERS = ['anthropic', 'azure', 'ollama', 'ollama_chat'];

/** A model name's provider and the name the provider knows it by; `openai_compatible` for no known prefix. */
export function providerOf(model: string): { provider: string; name: string } {
  const slash = model.indexOf('/');
  const prefix = slash === -1 ? '' : model.slice(0, slash);
  const known = prefix in OPENAI_COMPATIBLE_PROVIDERS || OTHER_PROVIDERS.includes(prefix);
  return known ? { provider: prefix, name: model.slice(slash + 1) } : { provider: 'openai_compatible', name: model };
}

/** Where a model's calls go without a base_url; null when its provider has no public address (azure, a proxy). */
export function defaultBaseUrlOf(model: string): string | null {
  const { provider } = providerOf(model);
  if (provider === 'anthropic') return ANTHROPIC_DEFAULT_BASE_URL;
  if (provider === 'ollama' || provider === 'ollama_chat') return OLLAMA_DEFAULT_BASE_URL;
  if (provider === 'openai_compatible') return OPENAI_COMPATIBLE_PROVIDERS.openai ?? null;
  return OPENAI_COMPATIBLE_PROVIDERS[provider] ?? null;
}

/**
 * The header the control plane's LLM relay sets on an answer it made itself, rather than one the
 * provider sent: the value says why (`unreachable`: the provider could not be reached at all;
 * `unconfigured`: no key to call it with; `unauthorized`: no or an unknown relay token; `refused`:
 * not an LLM call). The agent-server takes such an answer as final rather
 * than retrying it for minutes, so the conversation shows the failure at once.
 */
export const LLM_RELAY_VERDICT_HEADER = 'x-sandbox-server-llm-relay';
export const LLM_RELAY_VERDICTS = ['unreachable', 'unconfigured', 'unauthorized', 'refused'] as const;
