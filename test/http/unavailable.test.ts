import { describe, expect, it } from 'vitest';
import { isDependencyUnavailable } from '../../src/http/unavailable.js';

const withCode = (code: string, cause?: unknown) => Object.assign(new Error(code), { code, cause });

describe('isDependencyUnavailable', () => {
  it('recognises socket and connection failures, and PostgreSQL shutting down or starting up, however deeply wrapped', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'CONNECTION_CLOSED', 'CONNECT_TIMEOUT', '57P01', '57P03', '08006']) {
      expect(isDependencyUnavailable(withCode(code))).toBe(true);
      expect(isDependencyUnavailable(new Error('Failed query', { cause: new Error('wrapped', { cause: withCode(code) }) }))).toBe(true);
    }
  });

  it('leaves query errors and bugs alone', () => {
    for (const error of [withCode('23505'), withCode('42P01'), new TypeError('x is undefined'), 'text', null]) {
      expect(isDependencyUnavailable(error)).toBe(false);
    }
  });
});
