/**
 * An agent's LLM as OpenHands' `LLM` model describes it (`agent.llm` of StartConversationRequest):
 * every field OpenHands defines, with its type. Nothing here is silent: each field changes the
 * calls the agent makes (see docs/llm.md), and the values this server cannot honour are refused by
 * `refuseUnsupportedLlmSettings` with a 422 that names the field. Unknown fields are kept as sent,
 * as OpenHands (pydantic, extra=ignore) would ignore them.
 *
 * Types are lenient where OpenHands' are (a SecretStr arrives as a plain string); the refusals run
 * on requests only, so a conversation stored before a refusal was added still loads.
 */
import { z } from 'zod';

const nullableString = z.string().nullish();
const nonNegative = z.number().min(0);

export const LlmSchema = z.looseObject({
  model: z.string().min(1),
  api_key: nullableString,
  base_url: nullableString,
  api_version: nullableString,
  aws_access_key_id: nullableString,
  aws_secret_access_key: nullableString,
  aws_region_name: nullableString,
  openrouter_site_url: nullableString,
  openrouter_app_name: nullableString,
  num_retries: z.int().min(0).nullish(),
  retry_multiplier: nonNegative.nullish(),
  retry_min_wait: nonNegative.nullish(),
  retry_max_wait: nonNegative.nullish(),
  timeout: nonNegative.nullish(),
  max_message_chars: z.int().min(1).nullish(),
  temperature: nonNegative.nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  top_k: nonNegative.nullish(),
  max_input_tokens: z.int().min(1).nullish(),
  max_output_tokens: z.int().min(1).nullish(),
  model_canonical_name: nullableString,
  extra_headers: z.record(z.string(), z.string()).nullish(),
  input_cost_per_token: nonNegative.nullish(),
  output_cost_per_token: nonNegative.nullish(),
  ollama_base_url: nullableString,
  stream: z.boolean().nullish(),
  drop_params: z.boolean().nullish(),
  modify_params: z.boolean().nullish(),
  disable_vision: z.boolean().nullish(),
  disable_stop_word: z.boolean().nullish(),
  caching_prompt: z.boolean().nullish(),
  log_completions: z.boolean().nullish(),
  log_completions_folder: nullableString,
  custom_tokenizer: nullableString,
  native_tool_calling: z.boolean().nullish(),
  force_string_serializer: z.boolean().nullish(),
  reasoning_effort: z.enum(['low', 'medium', 'high', 'xhigh', 'none']).nullish(),
  reasoning_summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
  enable_encrypted_reasoning: z.boolean().nullish(),
  prompt_cache_retention: nullableString,
  extended_thinking_budget: z.int().min(0).nullish(),
  seed: z.int().nullish(),
  safety_settings: z.array(z.record(z.string(), z.string())).nullish(),
  usage_id: z.string().min(1).nullish(),
  litellm_extra_body: z.record(z.string(), z.unknown()).nullish(),
});
export type Llm = z.output<typeof LlmSchema>;

/** The fields OpenHands declares as secrets, and those that carry credentials in their values. */
export const LLM_SECRET_FIELDS = ['api_key', 'aws_access_key_id', 'aws_secret_access_key', 'extra_headers'] as const;

/** LiteLLM providers that sign requests their own way (AWS SigV4, Google service accounts). */
const UNSUPPORTED_PROVIDERS = ['bedrock/', 'vertex_ai/', 'sagemaker/'] as const;

interface Refusal {
  field: keyof Llm;
  /** True when the value asks for something this server cannot do. */
  refuses: (llm: Llm) => boolean;
  msg: string;
}

const REFUSALS: readonly Refusal[] = [
  {
    field: 'model',
    refuses: (llm) => UNSUPPORTED_PROVIDERS.some((prefix) => llm.model.startsWith(prefix)),
    msg: `the providers ${UNSUPPORTED_PROVIDERS.join(', ')} are not supported; put an OpenAI-compatible gateway (litellm_proxy/...) in front of them`,
  },
  { field: 'aws_access_key_id', refuses: (llm) => Boolean(llm.aws_access_key_id), msg: 'AWS Bedrock is not supported' },
  { field: 'aws_secret_access_key', refuses: (llm) => Boolean(llm.aws_secret_access_key), msg: 'AWS Bedrock is not supported' },
  { field: 'aws_region_name', refuses: (llm) => Boolean(llm.aws_region_name), msg: 'AWS Bedrock is not supported' },
  {
    field: 'custom_tokenizer',
    refuses: (llm) => Boolean(llm.custom_tokenizer),
    msg: 'custom tokenizers are not supported: token counts come from the provider\'s usage report',
  },
  {
    field: 'modify_params',
    refuses: (llm) => llm.modify_params === false,
    msg: 'modify_params=false is not supported: requests are always adapted to the provider (empty contents filled, as LiteLLM does)',
  },
];

/** Refuses the settings this server cannot honour, naming each field (a 422 at agent.llm.<field>). */
export function refuseUnsupportedLlmSettings(llm: Llm, context: z.RefinementCtx): void {
  for (const refusal of REFUSALS) {
    if (refusal.refuses(llm)) context.addIssue({ code: 'custom', path: [refusal.field], message: `${refusal.field}: ${refusal.msg}` });
  }
}

/** The names of OpenHands' LLM fields, for the test that proves none of them is silent. */
export const LLM_FIELDS = Object.keys(LlmSchema.shape) as (keyof Llm)[];

/** Fields refused for some values (the others always take effect). */
export const REFUSABLE_LLM_FIELDS: readonly (keyof Llm)[] = REFUSALS.map((refusal) => refusal.field);
