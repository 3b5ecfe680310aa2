import { describe, expect, it } from 'vitest';
import { LlmError, resolveRoute } from '../../../../src/agent-server/agent/llm/index.js';

describe('resolveRoute', () => {
  it.each([
    [{ model: 'gpt-4o' }, 'openai-chat', 'https://api.openai.com/v1/chat/completions', 'gpt-4o'],
    [{ model: 'openai/gpt-4o', base_url: 'http://127.0.0.1:4000/v1/' }, 'openai-chat', 'http://127.0.0.1:4000/v1/chat/completions', 'gpt-4o'],
    [{ model: 'openai/gpt-5-codex' }, 'openai-responses', 'https://api.openai.com/v1/responses', 'gpt-5-codex'],
    [{ model: 'litellm_proxy/claude-sonnet-4', base_url: 'http://127.0.0.1:4000' }, 'openai-chat', 'http://127.0.0.1:4000/chat/completions', 'claude-sonnet-4'],
    [{ model: 'litellm_proxy/openai/gpt-4o', base_url: 'http://h:4000' }, 'openai-chat', 'http://h:4000/chat/completions', 'openai/gpt-4o'],
    [{ model: 'anthropic/claude-sonnet-4-5' }, 'anthropic', 'https://api.anthropic.com/v1/messages', 'claude-sonnet-4-5'],
    [{ model: 'anthropic/claude-sonnet-4-5', base_url: 'http://127.0.0.1:9/v1' }, 'anthropic', 'http://127.0.0.1:9/v1/messages', 'claude-sonnet-4-5'],
    [
      { model: 'azure/my-gpt4o', base_url: 'https://res.openai.azure.com', api_version: '2024-10-21' },
      'openai-chat',
      'https://res.openai.azure.com/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21',
      'my-gpt4o',
    ],
    [{ model: 'openrouter/anthropic/claude-3.5-sonnet' }, 'openai-chat', 'https://openrouter.ai/api/v1/chat/completions', 'anthropic/claude-3.5-sonnet'],
    [{ model: 'ollama/llama3' }, 'ollama', 'http://localhost:11434/api/chat', 'llama3'],
    [{ model: 'ollama/llama3', ollama_base_url: 'http://127.0.0.1:11435' }, 'ollama', 'http://127.0.0.1:11435/api/chat', 'llama3'],
    [{ model: 'gemini/gemini-2.5-pro' }, 'openai-chat', 'https://generativelanguage.googleapis.com/v1beta/openai/chat/completions', 'gemini-2.5-pro'],
    [{ model: 'Qwen/Qwen3-Coder', base_url: 'http://127.0.0.1:8000/v1' }, 'openai-chat', 'http://127.0.0.1:8000/v1/chat/completions', 'Qwen/Qwen3-Coder'],
  ])('routes %j', (settings, dialect, url, model) => {
    const route = resolveRoute(settings);
    expect({ dialect: route.dialect, url: route.url.href, model: route.model }).toEqual({ dialect, url, model });
  });

  it('sends the key the way each provider wants it', () => {
    expect(resolveRoute({ model: 'gpt-4o', api_key: 'k' }).headers).toEqual({ authorization: 'Bearer k' });
    expect(resolveRoute({ model: 'anthropic/claude-opus-4', api_key: 'k' }).headers).toMatchObject({ 'x-api-key': 'k', 'anthropic-version': '2023-06-01' });
    expect(resolveRoute({ model: 'azure/d', base_url: 'https://r.openai.azure.com', api_key: 'k' }).headers).toEqual({ 'api-key': 'k' });
    expect(resolveRoute({ model: 'openrouter/x', api_key: 'k', openrouter_site_url: 'https://me', openrouter_app_name: 'Me' }).headers).toEqual({
      authorization: 'Bearer k',
      'http-referer': 'https://me',
      'x-title': 'Me',
    });
  });

  it.each([
    { model: 'litellm_proxy/x' },
    { model: 'azure/d' },
    { model: 'gpt-4o', base_url: '127.0.0.1:4000' },
    { model: 'gpt-4o', base_url: 'ftp://example.com/v1' },
  ])('refuses %j as a bad request', (settings) => {
    expect(() => resolveRoute(settings)).toThrow(LlmError);
  });
});
