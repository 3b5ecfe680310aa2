import { describe, expect, it } from 'vitest';
import { errorFromHttpStatus, LlmError, serverMessage } from '../../../../src/agent-server/agent/llm/llm-error.js';

describe('errorFromHttpStatus', () => {
  it.each([
    [400, 'LLMBadRequestError', false],
    [401, 'LLMAuthenticationError', false],
    [403, 'LLMAuthenticationError', false],
    [404, 'LLMBadRequestError', false],
    [422, 'LLMBadRequestError', false],
    [408, 'LLMTimeoutError', true],
    [429, 'LLMRateLimitError', true],
    [500, 'LLMServiceUnavailableError', true],
    [502, 'LLMServiceUnavailableError', true],
    [503, 'LLMServiceUnavailableError', true],
  ] as const)('classifies %i as %s (retryable: %s)', (status, code, retryable) => {
    const error = errorFromHttpStatus(status, '', '{}', null);
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
    expect(error.status).toBe(status);
  });

  it.each([
    '{"error":{"message":"This model\'s maximum context length is 8192 tokens","code":"context_length_exceeded"}}',
    '{"error":{"message":"prompt is too long: 201234 tokens > 200000 maximum"}}',
    '{"detail":"ContextWindowExceededError: input exceeds the context window"}',
  ])('recognises an overlong prompt in %s', (body) => {
    expect(errorFromHttpStatus(400, 'Bad Request', body, null).code).toBe('LLMContextWindowExceedError');
  });

  it('says the status, its text and the server message, and keeps the wait asked for', () => {
    const error = errorFromHttpStatus(429, 'Too Many Requests', '{"error":{"message":"Slow down"}}', 2_000);
    expect(error.detail).toBe('LLM API answered 429 Too Many Requests: Slow down');
    expect(error.retryAfterMs).toBe(2_000);
    expect(error.message).toBe('LLMRateLimitError: LLM API answered 429 Too Many Requests: Slow down');
  });
});

describe('serverMessage', () => {
  it.each([
    ['{"error":{"message":"bad tool","type":"invalid_request_error"}}', 'bad tool'],
    ['{"error":"no such model"}', 'no such model'],
    ['{"detail":"Not Found"}', 'Not Found'],
    ['{"detail":[{"loc":["body"],"msg":"field required"}]}', '[{"loc":["body"],"msg":"field required"}]'],
    ['{"message":"quota"}', 'quota'],
    ['  <html>Bad Gateway</html>\n', '<html>Bad Gateway</html>'],
    ['{"unexpected":true}', '{"unexpected":true}'],
    ['', ''],
  ])('reads %s as %s', (body, expected) => {
    expect(serverMessage(body)).toBe(expected);
  });

  it('cuts very long bodies', () => {
    expect(serverMessage('x'.repeat(5_000))).toHaveLength(1_001);
  });
});

describe('LlmError.withDetail', () => {
  it('keeps the code, status and wait', () => {
    const error = new LlmError('LLMRateLimitError', 'old', { status: 429, retryAfterMs: 5 }).withDetail('new');
    expect([error.code, error.detail, error.status, error.retryAfterMs]).toEqual(['LLMRateLimitError', 'new', 429, 5]);
  });
});
