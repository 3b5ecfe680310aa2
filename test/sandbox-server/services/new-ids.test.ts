import { describe, expect, it } from 'vitest';
import { newSandboxId, newSessionApiKey } from '../../../src/sandbox-server/services/sandboxes/new-ids.js';

describe('new ids', () => {
  it('makes 32-digit lower-case hex sandbox ids, valid in a host name', () => {
    const ids = Array.from({ length: 2000 }, newSandboxId);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('makes distinct 43-character session keys', () => {
    const keys = Array.from({ length: 100 }, newSessionApiKey);
    for (const key of keys) expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
