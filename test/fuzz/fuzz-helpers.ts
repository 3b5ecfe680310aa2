import { randomUUID } from 'node:crypto';
import fc from 'fast-check';

const POOL_SIZE = 64;
const ID_FIELD = /^(id|\w+_id)$/;

/**
 * Ids the servers handed out (conversations, sandboxes, events, pages), so that generated requests
 * reach existing resources and not only 404s. The pool changes with the answers, so a seed replays
 * the same choices (the n-th remembered id) rather than the same id text.
 */
export function idPool(): { arbitrary: fc.Arbitrary<string>; observe(body: unknown): void } {
  const ids: string[] = [];
  const remember = (value: unknown): void => {
    if (typeof value !== 'string' || value === '' || ids.includes(value)) return;
    ids.push(value);
    if (ids.length > POOL_SIZE) ids.shift();
  };
  const visit = (value: unknown, depth: number): void => {
    if (depth > 3 || typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) {
      value.slice(0, 10).forEach((item) => visit(item, depth + 1));
      return;
    }
    for (const [key, field] of Object.entries(value)) {
      if (ID_FIELD.test(key)) remember(field);
      else visit(field, depth + 1);
    }
  };
  return {
    arbitrary: fc.oneof(
      { arbitrary: fc.nat().map((n) => ids[n % Math.max(1, ids.length)] ?? randomUUID()), weight: 3 },
      { arbitrary: fc.uuid(), weight: 1 },
    ),
    observe: (body) => visit(body, 0),
  };
}

/**
 * Makes global fetch refuse every host but loopback for the rest of the test: agents started by
 * generated requests must never reach a real LLM (tests talk only to 127.0.0.0/8). Returns the undo.
 */
export function guardLoopbackFetch(): () => void {
  const original = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!/^127\.\d+\.\d+\.\d+$/.test(host) && host !== '::1' && host !== 'localhost') {
      return Promise.reject(new TypeError(`fetch failed: the fuzz suite allows only loopback hosts, not ${url.host}`));
    }
    return original(input, init);
  };
  return () => {
    globalThis.fetch = original;
  };
}
