/**
 * Why an LLM call failed. The codes are the OpenHands SDK's exception type names, because the agent
 * loop puts them unchanged into ConversationErrorEvent.code, where clients already know them.
 */
export type LlmErrorCode =
  | 'LLMRateLimitError'
  | 'LLMServiceUnavailableError'
  | 'LLMTimeoutError'
  | 'LLMConnectionError'
  | 'LLMNoResponseError'
  | 'LLMBadRequestError'
  | 'LLMContextWindowExceedError'
  | 'LLMAuthenticationError'
  | 'LLMResponseError';

/** Failures that can pass by themselves; the client retries these and nothing else. */
const TRANSIENT_CODES: ReadonlySet<LlmErrorCode> = new Set<LlmErrorCode>([
  'LLMRateLimitError',
  'LLMServiceUnavailableError',
  'LLMTimeoutError',
  'LLMConnectionError',
  'LLMNoResponseError',
]);

export interface LlmErrorOptions {
  /** HTTP status of the failed answer; null when none arrived. */
  status?: number | null;
  /** How long the server asked us to wait (Retry-After), in milliseconds. */
  retryAfterMs?: number | null;
  /** Not retried whatever its code: the control plane's LLM relay already knows it will not pass soon. */
  final?: boolean;
}

export class LlmError extends Error {
  readonly status: number | null;
  readonly retryAfterMs: number | null;
  readonly final: boolean;

  constructor(
    readonly code: LlmErrorCode,
    readonly detail: string,
    options: LlmErrorOptions = {},
  ) {
    super(`${code}: ${detail}`);
    this.name = 'LlmError';
    this.status = options.status ?? null;
    this.retryAfterMs = options.retryAfterMs ?? null;
    this.final = options.final ?? false;
  }

  get retryable(): boolean {
    return !this.final && TRANSIENT_CODES.has(this.code);
  }

  withDetail(detail: string): LlmError {
    return new LlmError(this.code, detail, { status: this.status, retryAfterMs: this.retryAfterMs, final: this.final });
  }
}

/** Providers word it differently; these cover OpenAI, Anthropic, vLLM and LiteLLM. */
const CONTEXT_WINDOW_PATTERN =
  /context_length_exceeded|context ?window|maximum context length|prompt is too long|too many (input )?tokens/i;

const MAX_MESSAGE_CHARS = 1000;

/**
 * Classifies a non-2xx answer of the chat completions endpoint. `relayVerdict` is the control
 * plane's LLM relay's LLM_RELAY_VERDICT_HEADER: an answer the relay made itself is final, and one
 * saying the provider is unreachable is a connection error, as it would have been without the relay.
 */
export function errorFromHttpStatus(
  status: number,
  statusText: string,
  bodyText: string,
  retryAfterMs: number | null,
  relayVerdict: string | null = null,
): LlmError {
  const message = serverMessage(bodyText);
  if (relayVerdict !== null) {
    const code = relayVerdict === 'unreachable' ? 'LLMConnectionError' : codeForStatus(status, bodyText);
    return new LlmError(code, message || `the LLM relay answered ${status}`, { status, final: true });
  }
  const detail = `LLM API answered ${status}${statusText ? ` ${statusText}` : ''}${message ? `: ${message}` : ''}`;
  return new LlmError(codeForStatus(status, bodyText), detail, { status, retryAfterMs });
}

function codeForStatus(status: number, bodyText: string): LlmErrorCode {
  if (status === 401 || status === 403) return 'LLMAuthenticationError';
  if (status === 408) return 'LLMTimeoutError';
  if (status === 429) return 'LLMRateLimitError';
  if (status >= 500) return 'LLMServiceUnavailableError';
  if (CONTEXT_WINDOW_PATTERN.test(bodyText)) return 'LLMContextWindowExceedError';
  return 'LLMBadRequestError';
}

/**
 * The human part of an error body: OpenAI's `{"error":{"message"}}`, a bare `{"error":"..."}`,
 * FastAPI's `{"detail":...}` or `{"message":"..."}`; otherwise the text itself.
 */
export function serverMessage(bodyText: string): string {
  const text = bodyText.trim();
  let message = text;
  try {
    message = messageOf(JSON.parse(text)) ?? text;
  } catch {
    // Not JSON: the text is the message.
  }
  return message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS)}…` : message;
}

function messageOf(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const { error, detail, message } = body;
  if (isRecord(error) && typeof error.message === 'string') return error.message;
  if (typeof error === 'string') return error;
  if (typeof detail === 'string') return detail;
  if (detail !== undefined) return JSON.stringify(detail);
  if (typeof message === 'string') return message;
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
