import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatTool } from '../../../../src/agent-server/agent/llm/chat-messages.js';
import { LlmError } from '../../../../src/agent-server/agent/llm/llm-error.js';
import { buildChatCompletionBody, chatCompletionsUrl, endpointModelName } from '../../../../src/agent-server/agent/llm/request-body.js';

const MESSAGES: ChatMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } }] }];
const TOOL: ChatTool = { type: 'function', function: { name: 'finish', parameters: { type: 'object', properties: {} } } };

describe('endpointModelName', () => {
  it.each([
    ['openai/gpt-4o', 'gpt-4o'],
    ['litellm_proxy/claude-sonnet-4', 'claude-sonnet-4'],
    ['litellm_proxy/openai/gpt-4o', 'openai/gpt-4o'],
    ['anthropic/claude-sonnet-4-5', 'anthropic/claude-sonnet-4-5'],
    ['gpt-4o-mini', 'gpt-4o-mini'],
  ])('sends %s as %s', (model, expected) => {
    expect(endpointModelName(model)).toBe(expected);
  });
});

describe('chatCompletionsUrl', () => {
  it.each([
    ['http://127.0.0.1:4000/v1', 'http://127.0.0.1:4000/v1/chat/completions'],
    ['http://127.0.0.1:4000/v1/', 'http://127.0.0.1:4000/v1/chat/completions'],
    ['https://api.openai.com/v1', 'https://api.openai.com/v1/chat/completions'],
  ])('appends /chat/completions to %s', (baseUrl, expected) => {
    expect(chatCompletionsUrl(baseUrl).href).toBe(expected);
  });

  it.each(['127.0.0.1:4000', 'ftp://example.com/v1', ''])('refuses %j', (baseUrl) => {
    expect(() => chatCompletionsUrl(baseUrl)).toThrow(LlmError);
  });
});

describe('buildChatCompletionBody', () => {
  it('sends only the settings that are set', () => {
    const body = buildChatCompletionBody('gpt-4o', { temperature: null, top_p: 0.9, reasoning_effort: 'high' }, MESSAGES, undefined);
    expect(body).toEqual({ model: 'gpt-4o', messages: MESSAGES, top_p: 0.9, reasoning_effort: 'high' });
  });

  it('lets extra_body add fields but not replace the model, messages or tools', () => {
    const body = buildChatCompletionBody(
      'openai/gpt-4o',
      { extra_body: { model: 'other', messages: [], tools: [], metadata: { tags: ['agent'] } } },
      MESSAGES,
      [TOOL],
    );
    expect(body).toEqual({ model: 'gpt-4o', messages: MESSAGES, tools: [TOOL], tool_choice: 'auto', metadata: { tags: ['agent'] } });
  });
});
