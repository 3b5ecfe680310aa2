/** What pydantic prints for a SecretStr; OpenHands clients expect it in place of a key. */
export const MASKED_SECRET = '**********';

/** The LLM fields OpenHands declares as secrets, wherever an LLM config appears (agent, condenser, ...). */
const SECRET_FIELDS = new Set(['api_key', 'aws_access_key_id', 'aws_secret_access_key', 'aws_session_token']);

/** A deep copy of `value` with every secret field that holds a value replaced by the mask. */
export function maskSecrets<T>(value: T): T {
  return maskValue(value) as T;
}

function maskValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskValue);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [
      key,
      SECRET_FIELDS.has(key) && field !== null && field !== undefined ? MASKED_SECRET : maskValue(field),
    ]),
  );
}
