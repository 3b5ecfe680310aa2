import { existsSync } from 'node:fs';

import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startRequest, useTestAgentServer } from '../../helpers/agent-server.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { type ConversationInfo } from '../../../src/contracts/agent-server/conversation-info.js';
import { LLM_FIELDS, REFUSABLE_LLM_FIELDS, type Llm } from '../../../src/contracts/agent-server/llm-settings.js';
import { type Event } from '../../../src/events/index.js';
import { startScriptedLlm, text, toolCalls, type ReceivedRequest, type ScriptedLlm, type ScriptStep } from '../../helpers/scripted-llm.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';
import { runEnded } from './harness.js';

/**
 * No silent settings: every field OpenHands defines on an LLM either shows in what the stand-in
 * LLM received (body, headers, path, number and timing of requests) or in what the conversation
 * reports (events, stats, files), or is refused with a 422 naming it.
 */

interface Observed {
  requests: ReceivedRequest[];
  info: ConversationInfo;
  events: Event[];
  workspace: string;
}

interface Probe {
  settings: Partial<Llm> & Record<string, unknown>;
  /** What the stand-in answers; one text answer (the agent finishes) when absent. */
  script?: ScriptStep[];
  message?: unknown[];
  check(observed: Observed): void;
}

const body = (observed: Observed, index = 0): Record<string, unknown> => observed.requests[index]!.body as Record<string, unknown>;
const firstUserContent = (observed: Observed): unknown =>
  (body(observed).messages as { role: string; content: unknown }[]).find((message) => message.role === 'user')?.content;
const gapMs = (observed: Observed): number => observed.requests[1]!.receivedAt - observed.requests[0]!.receivedAt;
const IMAGE = { type: 'image', image_urls: ['data:image/png;base64,iVBORw0KGgo='] };
const RETRY_ONCE: ScriptStep[] = [{ status: 500 }, text('done')];

const PROBES: Record<string, Probe> = {
  model: { settings: { model: 'anthropic/claude-sonnet-4-5' }, check: (o) => expect([o.requests[0]!.path, body(o).model]).toEqual(['/v1/messages', 'claude-sonnet-4-5']) },
  api_key: { settings: { api_key: 'sk-probe' }, check: (o) => expect(o.requests[0]!.headers.authorization).toBe('Bearer sk-probe') },
  base_url: { settings: { base_url: 'ORIGIN/custom/v1' }, check: (o) => expect(o.requests[0]!.path).toBe('/custom/v1/chat/completions') },
  api_version: {
    settings: { model: 'azure/my-deployment', base_url: 'ORIGIN', api_version: '2024-10-21' },
    check: (o) => expect(o.requests[0]!.path).toBe('/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21'),
  },
  openrouter_site_url: { settings: { model: 'openrouter/x/y', openrouter_site_url: 'https://me.example' }, check: (o) => expect(o.requests[0]!.headers['http-referer']).toBe('https://me.example') },
  openrouter_app_name: { settings: { model: 'openrouter/x/y', openrouter_app_name: 'Probe' }, check: (o) => expect(o.requests[0]!.headers['x-title']).toBe('Probe') },
  num_retries: {
    settings: { num_retries: 2, retry_min_wait: 0, retry_max_wait: 0 },
    script: [{ status: 500 }, { status: 503 }, text('done')],
    check: (o) => expect([o.requests.length, o.info.execution_status]).toEqual([3, 'finished']),
  },
  retry_multiplier: { settings: { num_retries: 1, retry_multiplier: 0.3, retry_min_wait: 0, retry_max_wait: 5 }, script: RETRY_ONCE, check: (o) => expect(gapMs(o)).toBeGreaterThanOrEqual(290) },
  retry_min_wait: { settings: { num_retries: 1, retry_multiplier: 0, retry_min_wait: 0.3, retry_max_wait: 5 }, script: RETRY_ONCE, check: (o) => expect(gapMs(o)).toBeGreaterThanOrEqual(290) },
  retry_max_wait: {
    settings: { num_retries: 1, retry_multiplier: 100, retry_min_wait: 0, retry_max_wait: 0.2 },
    script: RETRY_ONCE,
    check: (o) => expect(gapMs(o)).toBeGreaterThanOrEqual(190),
  },
  timeout: {
    settings: { timeout: 0.2, num_retries: 1, retry_min_wait: 0, retry_max_wait: 0 },
    script: [{ delayMs: 2000, then: text('too late') }, text('done')],
    check: (o) => expect([o.requests.length, o.info.execution_status]).toEqual([2, 'finished']),
  },
  max_message_chars: { settings: { max_message_chars: 40 }, message: [{ type: 'text', text: 'x'.repeat(500) }], check: (o) => expect(JSON.stringify(firstUserContent(o))).toContain('<response clipped>') },
  temperature: { settings: { temperature: 0.3 }, check: (o) => expect(body(o).temperature).toBe(0.3) },
  top_p: { settings: { top_p: 0.5 }, check: (o) => expect(body(o).top_p).toBe(0.5) },
  top_k: { settings: { top_k: 20 }, check: (o) => expect(body(o).top_k).toBe(20) },
  max_input_tokens: {
    settings: { max_input_tokens: 1 },
    script: [toolCalls([{ name: 'think', arguments: { thought: 'plan' } }]), text('the summary'), text('done')],
    check: (o) => expect(JSON.stringify(body(o, 1).messages)).toContain('You keep the memory'),
  },
  max_output_tokens: { settings: { max_output_tokens: 77 }, check: (o) => expect(body(o).max_completion_tokens).toBe(77) },
  model_canonical_name: {
    settings: { model: 'litellm_proxy/house-coder', model_canonical_name: 'openai/gpt-5-codex' },
    check: (o) => expect([o.requests[0]!.path, body(o).model]).toEqual(['/v1/responses', 'house-coder']),
  },
  extra_headers: { settings: { extra_headers: { 'X-Probe': 'probe-value' } }, check: (o) => expect(o.requests[0]!.headers['x-probe']).toBe('probe-value') },
  input_cost_per_token: { settings: { input_cost_per_token: 0.001 }, check: (o) => expect(o.info.stats.usage_to_metrics.default?.accumulated_cost).toBeCloseTo(0.01, 10) },
  output_cost_per_token: { settings: { output_cost_per_token: 0.002 }, check: (o) => expect(o.info.stats.usage_to_metrics.default?.accumulated_cost).toBeCloseTo(0.01, 10) },
  ollama_base_url: { settings: { model: 'ollama/llama3', base_url: null, ollama_base_url: 'ORIGIN' }, check: (o) => expect([o.requests[0]!.path, body(o).model]).toEqual(['/api/chat', 'llama3']) },
  drop_params: { settings: { model: 'openai/gpt-4o', drop_params: false, top_k: 5 }, check: (o) => expect(body(o).top_k).toBe(5) },
  disable_vision: { settings: { disable_vision: true }, message: [{ type: 'text', text: 'look' }, IMAGE], check: (o) => expect(JSON.stringify(firstUserContent(o))).not.toContain('image_url') },
  disable_stop_word: { settings: { native_tool_calling: false, disable_stop_word: true }, check: (o) => expect(body(o).stop).toBeUndefined() },
  caching_prompt: {
    settings: { model: 'anthropic/claude-sonnet-4-5', caching_prompt: true },
    check: (o) => expect((body(o).system as { cache_control?: unknown }[]).at(-1)?.cache_control).toEqual({ type: 'ephemeral' }),
  },
  log_completions: { settings: { log_completions: true }, check: (o) => expect(o.events.some((event) => event.kind === 'LLMCompletionLogEvent')).toBe(true) },
  log_completions_folder: {
    settings: { log_completions: true, log_completions_folder: 'logs/completions' },
    check: (o) => expect(existsSync(join(o.workspace, 'logs/completions'))).toBe(true),
  },
  native_tool_calling: {
    settings: { native_tool_calling: false },
    script: [text('I am done.\n<function=finish>\n<parameter=message>all done</parameter>\n')],
    check: (o) => {
      expect(body(o).tools).toBeUndefined();
      expect(body(o).stop).toEqual(['</function']);
      expect(JSON.stringify(body(o).messages)).toContain('BEGIN FUNCTION');
      expect(o.events.find((event) => event.kind === 'ActionEvent')).toMatchObject({ action: { kind: 'FinishAction', message: 'all done' } });
    },
  },
  force_string_serializer: { settings: { force_string_serializer: true }, message: [{ type: 'text', text: 'look' }, IMAGE], check: (o) => expect(firstUserContent(o)).toBe('look') },
  reasoning_effort: { settings: { model: 'o3-mini', reasoning_effort: 'low' }, check: (o) => expect(body(o).reasoning_effort).toBe('low') },
  reasoning_summary: { settings: { model: 'openai/gpt-5-codex', reasoning_summary: 'detailed' }, check: (o) => expect(body(o).reasoning).toMatchObject({ summary: 'detailed' }) },
  enable_encrypted_reasoning: {
    settings: { model: 'openai/gpt-5-codex', enable_encrypted_reasoning: false },
    check: (o) => expect([body(o).include, body(o).store]).toEqual([undefined, undefined]),
  },
  prompt_cache_retention: { settings: { model: 'gpt-5', prompt_cache_retention: '24h' }, check: (o) => expect(body(o).prompt_cache_retention).toBe('24h') },
  extended_thinking_budget: {
    settings: { model: 'anthropic/claude-sonnet-4-5', extended_thinking_budget: 2048, max_output_tokens: 4096 },
    check: (o) => expect([body(o).thinking, body(o).max_tokens]).toEqual([{ type: 'enabled', budget_tokens: 2048 }, 4096]),
  },
  seed: { settings: { seed: 7 }, check: (o) => expect(body(o).seed).toBe(7) },
  stream: {
    settings: { stream: true },
    script: [text('streamed answer')],
    check: (o) => {
      expect([body(o).stream, body(o).stream_options]).toEqual([true, { include_usage: true }]);
      const answer = o.events.find((event) => event.kind === 'MessageEvent' && event.source === 'agent');
      expect(answer).toMatchObject({ llm_message: { content: [{ type: 'text', text: 'streamed answer' }] } });
    },
  },
  safety_settings: {
    settings: { model: 'gemini/gemini-2.5-flash', safety_settings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }] },
    check: (o) => expect(body(o).safety_settings).toEqual([{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }]),
  },
  usage_id: { settings: { usage_id: 'probe' }, check: (o) => expect(Object.keys(o.info.stats.usage_to_metrics)).toEqual(['probe']) },
  litellm_extra_body: { settings: { litellm_extra_body: { metadata: { tags: ['probe'] } } }, check: (o) => expect(body(o).metadata).toEqual({ tags: ['probe'] }) },
};

/** A value of each refusable field that is refused. */
const REFUSED: Record<string, unknown> = {
  model: 'bedrock/anthropic.claude-3-sonnet',
  aws_access_key_id: 'AKIAPROBE',
  aws_secret_access_key: 'probe-secret',
  aws_region_name: 'us-east-1',
  custom_tokenizer: 'hf/tokenizer',
  modify_params: false,
};

describe('every LLM setting OpenHands defines', () => {
  it('has a probe showing its effect, or a refusal', () => {
    const covered = new Set([...Object.keys(PROBES), ...Object.keys(REFUSED)]);
    expect(LLM_FIELDS.filter((field) => !covered.has(field))).toEqual([]);
    expect([...REFUSABLE_LLM_FIELDS].sort()).toEqual(Object.keys(REFUSED).sort());
  });

  let workspace: string;
  let llm: ScriptedLlm | undefined;
  beforeEach(async () => {
    workspace = await makeTempDir('llm-settings-workspace-');
  });
  afterEach(async () => {
    await llm?.close();
    llm = undefined;
    await removeDir(workspace);
  });
  const agent = useTestAgentServer({ tempPrefix: 'llm-settings-' });

  async function observe(probe: Probe): Promise<Observed> {
    llm = await startScriptedLlm(probe.script ?? [text('done')]);
    const origin = new URL(llm.baseUrl).origin;
    const settings = Object.fromEntries(
      Object.entries(probe.settings).map(([key, value]) => [key, typeof value === 'string' ? value.replace('ORIGIN', origin) : value]),
    );
    const created = await agent.server.createConversation(
      startRequest({
        agent: { kind: 'Agent', llm: { model: 'scripted', base_url: llm.baseUrl, api_key: 'sk-test', ...settings } },
        workspace: { working_dir: workspace },
        initial_message: { role: 'user', content: probe.message ?? [{ type: 'text', text: 'go' }], run: true },
      }),
    );
    return { requests: llm.requests, ...(await runEnded(agent, created.id)), workspace };
  }

  it.each(Object.entries(PROBES))('%s changes the call or the account of it', async (_field, probe) => {
    const observed = await observe(probe);
    probe.check(observed);
  });

  it.each(Object.entries(REFUSED))('%s is refused with a 422 naming it when set to %j', async (field, value) => {
    const { status, body: answer } = await agent.server.callJson(
      'POST',
      '/api/conversations',
      { json: startRequest({ agent: { kind: 'Agent', llm: { model: 'scripted', [field]: value } }, workspace: { working_dir: workspace } }) },
      ValidationErrorSchema,
    );
    expect(status).toBe(422);
    expect(answer.detail.map((detail) => detail.loc)).toContainEqual(['body', 'agent', 'llm', field]);
  });
});

