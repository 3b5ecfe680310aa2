/**
 * Where a model name sends a call, as LiteLLM and OpenHands name providers: the prefix before the
 * first `/` picks the provider, hence the wire dialect, the endpoint and the way the key travels.
 * A name without a known prefix (`gpt-4o`, `Qwen/Qwen3-Coder`) goes as it is to an
 * OpenAI-compatible server at `base_url`. The providers' default addresses are in
 * contracts/llm-providers.ts, which the control plane's LLM relay reads too.
 */
import { ANTHROPIC_DEFAULT_BASE_URL, OLLAMA_DEFAULT_BASE_URL, OPENAI_COMPATIBLE_PROVIDERS, providerOf } from '../../../contracts/llm-providers.js';
import { LlmError } from './llm-error.js';
import { modelFeatures } from './model-features.js';

export type DialectName = 'openai-chat' | 'openai-responses' | 'anthropic' | 'ollama';

export interface ProviderSettings {
  model: string;
  model_canonical_name?: string | null;
  base_url?: string | null;
  api_key?: string | null;
  api_version?: string | null;
  ollama_base_url?: string | null;
  openrouter_site_url?: string | null;
  openrouter_app_name?: string | null;
}

export interface Route {
  /** The provider's LiteLLM name: openai, anthropic, azure, ollama, ... */
  provider: string;
  dialect: DialectName;
  url: URL;
  /** The model name the endpoint wants (prefix stripped, or an Azure deployment). */
  model: string;
  /** The key and the provider's own headers. */
  headers: Record<string, string>;
}

const AZURE_DEFAULT_API_VERSION = '2024-12-01-preview';
const ANTHROPIC_VERSION = '2023-06-01';

export function resolveRoute(settings: ProviderSettings): Route {
  const { provider, name } = providerOf(settings.model);
  const features = modelFeatures(settings.model_canonical_name ?? settings.model);
  const key = settings.api_key || null;
  const bearer: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
  const base = (fallback: string | null): string => {
    const chosen = settings.base_url || fallback;
    if (!chosen) throw new LlmError('LLMBadRequestError', `model ${JSON.stringify(settings.model)} needs a base_url`);
    return chosen.replace(/\/+$/, '');
  };

  if (provider === 'anthropic') {
    const root = base(ANTHROPIC_DEFAULT_BASE_URL).replace(/\/v1$/, '');
    const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION, ...(key === null ? {} : { 'x-api-key': key }) };
    return { provider, dialect: 'anthropic', url: endpoint(`${root}/v1/messages`), model: name, headers };
  }
  if (provider === 'azure') {
    const root = base(null).replace(/\/openai$/, '');
    const version = encodeURIComponent(settings.api_version || AZURE_DEFAULT_API_VERSION);
    const headers: Record<string, string> = key === null ? {} : { 'api-key': key };
    if (features.responsesApi) {
      return { provider, dialect: 'openai-responses', url: endpoint(`${root}/openai/responses?api-version=${version}`), model: name, headers };
    }
    const path = `${root}/openai/deployments/${encodeURIComponent(name)}/chat/completions?api-version=${version}`;
    return { provider, dialect: 'openai-chat', url: endpoint(path), model: name, headers };
  }
  if (provider === 'ollama' || provider === 'ollama_chat') {
    const root = (settings.base_url || settings.ollama_base_url || OLLAMA_DEFAULT_BASE_URL).replace(/\/+$/, '');
    return { provider, dialect: 'ollama', url: endpoint(`${root}/api/chat`), model: name, headers: bearer };
  }
  const root = base(provider === 'openai_compatible' ? (OPENAI_COMPATIBLE_PROVIDERS.openai ?? null) : (OPENAI_COMPATIBLE_PROVIDERS[provider] ?? null));
  const headers =
    provider === 'openrouter'
      ? {
          ...bearer,
          ...(settings.openrouter_site_url ? { 'http-referer': settings.openrouter_site_url } : {}),
          ...(settings.openrouter_app_name ? { 'x-title': settings.openrouter_app_name } : {}),
        }
      : bearer;
  // A base_url naming no API root (`http://host:4000`) is taken as is, as OpenAI clients do.
  if (features.responsesApi) return { provider, dialect: 'openai-responses', url: endpoint(`${root}/responses`), model: name, headers };
  return { provider, dialect: 'openai-chat', url: endpoint(`${root}/chat/completions`), model: name, headers };
}

/** A base_url that is not an http(s) URL is a bad request, not a crash. */
function endpoint(text: string): URL {
  if (URL.canParse(text)) {
    const url = new URL(text);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  }
  throw new LlmError('LLMBadRequestError', `base_url is not an http(s) URL: ${JSON.stringify(text)}`);
}
