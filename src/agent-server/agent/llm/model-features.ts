/**
 * What a model can take, known by its name (OpenHands keeps the same kind of registry; LiteLLM has
 * a bigger one). `model_canonical_name` wins over `model` when set, for proxies that alias models.
 * Names are matched without their provider prefix, case-insensitively.
 */

function baseName(model: string): string {
  return model.slice(model.lastIndexOf('/') + 1).toLowerCase();
}

const REASONING_EFFORT = /^(o1|o3|o4)(-|$)|gpt-5|gemini-(2\.5|3)|deepseek-reasoner|grok-(3-mini|4)/;
const EXTENDED_THINKING = /claude-(3-7|3\.7|sonnet-4|opus-4|haiku-4|4)/;
const PROMPT_CACHE_RETENTION = /gpt-5|gpt-4\.1/;
const RESPONSES_API = /codex|gpt-5-pro|o1-pro|o3-pro|o3-deep-research|o4-mini-deep-research|computer-use/;
const PROMPT_CACHE_CONTROL = /claude/;

export interface ModelFeatures {
  /** Takes `reasoning_effort`; ignores temperature and top_p, which are then not sent. */
  reasoningEffort: boolean;
  /** Anthropic extended thinking with a token budget. */
  extendedThinking: boolean;
  /** Takes OpenAI's `prompt_cache_retention`. */
  promptCacheRetention: boolean;
  /** Answers on OpenAI's Responses API only. */
  responsesApi: boolean;
  /** Caches prompts at `cache_control` breakpoints (Anthropic models, also behind gateways). */
  cacheControl: boolean;
}

export function modelFeatures(model: string): ModelFeatures {
  const name = baseName(model);
  return {
    reasoningEffort: REASONING_EFFORT.test(name),
    extendedThinking: EXTENDED_THINKING.test(name),
    promptCacheRetention: PROMPT_CACHE_RETENTION.test(name),
    responsesApi: RESPONSES_API.test(name),
    cacheControl: PROMPT_CACHE_CONTROL.test(name),
  };
}
