/** What pydantic prints for a SecretStr; OpenHands clients expect it in place of a key. */
export const MASKED_SECRET = '**********';

/** The LLM fields OpenHands declares as secrets, wherever an LLM config appears (agent, condenser, ...). */
const SECRET_FIELDS = new Set(['api_key', 'aws_access_key_id', 'aws_secret_access_key', 'aws_session_token']);

/** Fields whose keys are harmless but whose values carry credentials (`Authorization: Bearer ...`). */
const SECRET_VALUE_FIELDS = new Set(['extra_headers']);

function maskedField(field: string, item: unknown): unknown {
  if (item === null || item === undefined) return undefined;
  if (SECRET_FIELDS.has(field)) return MASKED_SECRET;
  if (SECRET_VALUE_FIELDS.has(field) && typeof item === 'object' && !Array.isArray(item)) {
    return Object.fromEntries(Object.keys(item).map((key) => [key, MASKED_SECRET]));
  }
  return undefined;
}

/**
 * A deep copy of `value` with every secret field that holds a value replaced by the mask. Copies
 * with its own stack rather than by recursion: settings stored before nesting was bounded may be
 * deeper than the call stack allows, and they must still be listed.
 */
export function maskSecrets<T>(value: T): T {
  const root: { value: unknown } = { value: undefined };
  const pending: Array<{ source: unknown; target: Record<string | number, unknown>; key: string | number }> = [
    { source: value, target: root as Record<string, unknown>, key: 'value' },
  ];
  while (pending.length > 0) {
    const { source, target, key } = pending.pop()!;
    if (typeof source !== 'object' || source === null) {
      target[key] = source;
      continue;
    }
    if (Array.isArray(source)) {
      const copy: unknown[] = new Array(source.length);
      target[key] = copy;
      source.forEach((item, index) => pending.push({ source: item, target: copy as unknown as Record<number, unknown>, key: index }));
      continue;
    }
    const copy: Record<string, unknown> = {};
    target[key] = copy;
    for (const [field, item] of Object.entries(source)) {
      // Assigned now, filled in later: keys keep their order.
      copy[field] = maskedField(field, item);
      if (copy[field] === undefined) pending.push({ source: item, target: copy, key: field });
    }
  }
  return root.value as T;
}
