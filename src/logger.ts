import { pino } from 'pino';
import { SESSION_KEY_HEADER_LOWER } from './contracts/agent-server/session-key.js';

/** Properties of database errors that carry the values of a query (secrets among them). */
const VALUE_FIELDS = ['params', 'parameters', 'detail', 'where'];

/**
 * pino's error serializer, minus the values of failed database queries: drizzle puts a query's
 * parameters in its message (and so its stack) and in `params`, PostgreSQL's errors name values in
 * `detail`. A spec's `initial_env`, a key, anything a query carried would reach the log.
 */
export function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const serialized = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  return redactQueryValues(serialized, 0);
}

function redactQueryValues(serialized: Record<string, unknown>, depth: number): Record<string, unknown> {
  for (const field of VALUE_FIELDS) if (field in serialized) serialized[field] = '[redacted]';
  for (const field of ['message', 'stack'] as const) {
    const text = serialized[field];
    if (typeof text === 'string') serialized[field] = text.replace(/\nparams: .*?(?=\n {4}at |$)/s, '\nparams: [redacted]');
  }
  const cause = serialized['cause'];
  if (depth < 8 && typeof cause === 'object' && cause !== null) redactQueryValues(cause as Record<string, unknown>, depth + 1);
  return serialized;
}

/** Values no log line may show, as they appear inside a JSON string; see hideInLogs. */
const hiddenValues = new Set<string>();
let hiddenPatterns: string[] = [];

/** Values shorter than this would cut holes in every line and hide nothing. */
const MIN_HIDDEN_LENGTH = 3;

/**
 * From now on every log line of this process shows `value` as `[redacted]`, wherever it appears
 * (a message, an error, a field): for secrets whose field names tell nothing (a conversation's
 * secrets, a git token), which pino's path-based redaction cannot find.
 */
export function hideInLogs(value: string): void {
  if (value.length < MIN_HIDDEN_LENGTH || hiddenValues.has(value)) return;
  hiddenValues.add(value);
  hiddenPatterns = [...hiddenValues].map((hidden) => JSON.stringify(hidden).slice(1, -1)).sort((a, b) => b.length - a.length);
}

/** `line` (a JSON log line) with every value given to hideInLogs replaced; pino calls it on each line. */
export function withoutHiddenValues(line: string): string {
  let result = line;
  for (const pattern of hiddenPatterns) if (result.includes(pattern)) result = result.replaceAll(pattern, '[redacted]');
  return result;
}

/** One JSON line per event. LOG_LEVEL=silent quiets it (the test runner does). */
export const logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: process.env.SERVICE_NAME },
  serializers: { err: serializeError },
  hooks: { streamWrite: withoutHiddenValues },
  redact: {
    paths: ['*.api_key', '*.secret', '*.session_api_key', '*.authorization', 'req.headers.authorization', `req.headers["${SESSION_KEY_HEADER_LOWER}"]`],
    censor: '[redacted]',
  },
});
export type Logger = typeof logger;
