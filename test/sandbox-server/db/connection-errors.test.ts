import { describe, expect, it } from 'vitest';
import { isConnectionError } from '../../../src/sandbox-server/db/connection-errors.js';

const withCode = (code: string, cause?: unknown) => Object.assign(new Error(code), { code, cause });

describe('isConnectionError', () => {
  it('recognises socket and connection failures, and PostgreSQL shutting down or starting up, however deeply wrapped', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'CONNECTION_CLOSED', 'CONNECT_TIMEOUT', '57P01', '57P03', '08006']) {
      expect(isConnectionError(withCode(code))).toBe(true);
      expect(isConnectionError(new Error('Failed query', { cause: new Error('wrapped', { cause: withCode(code) }) }))).toBe(true);
    }
  });

  it('leaves query errors and bugs alone', () => {
    for (const error of [withCode('23505'), withCode('42P01'), new TypeError('x is undefined'), 'text', null]) {
      expect(isConnectionError(error)).toBe(false);
    }
  });
});
