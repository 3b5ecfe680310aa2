import { describe, expect, it } from 'vitest';
import { parseRetryAfterMs, retryDelayMs } from '../../../../src/agent-server/agent/llm/retry-delay.js';

const POLICY = { minWaitMs: 8_000, maxWaitMs: 64_000 };

describe('retryDelayMs', () => {
  it('doubles from the minimum wait and stops at the maximum', () => {
    expect([0, 1, 2, 3, 4, 10].map((retry) => retryDelayMs(retry, POLICY, null, 0))).toEqual([8_000, 16_000, 32_000, 64_000, 64_000, 64_000]);
  });

  it('adds up to a quarter of jitter, still capped at the maximum', () => {
    expect(retryDelayMs(0, POLICY, null, 0.999)).toBe(9_998);
    expect(retryDelayMs(3, POLICY, null, 0.999)).toBe(64_000);
  });

  it('takes the server wait over its own schedule, capped at the maximum', () => {
    expect(retryDelayMs(3, POLICY, 0, 0.5)).toBe(0);
    expect(retryDelayMs(0, POLICY, 20_000, 0.5)).toBe(20_000);
    expect(retryDelayMs(0, POLICY, 3_600_000, 0.5)).toBe(64_000);
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it.each([
    [{ 'retry-after': '3' }, 3_000],
    [{ 'retry-after': '0.5' }, 500],
    [{ 'retry-after': 'Wed, 01 Jan 2025 00:00:10 GMT' }, 10_000],
    [{ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }, 0],
    [{ 'retry-after-ms': '250', 'retry-after': '3' }, 250],
    [{ 'retry-after': 'soon' }, null],
    [{ 'retry-after': '-1' }, null],
    [{ 'retry-after': '' }, null],
    [{}, null],
  ])('reads %j as %s', (headers, expected) => {
    expect(parseRetryAfterMs(new Headers(headers), now)).toBe(expected);
  });
});
