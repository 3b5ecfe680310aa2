/** What the client throws: the server answered an error, or it could not be reached at all. */
import type { ValidationErrorItem } from '../http/errors.js';

/** The server answered 4xx or 5xx; `detail` is the body's `detail` (a text, or a 422's list). */
export class SandboxServerError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | ValidationErrorItem[],
    readonly method: string,
    readonly path: string,
  ) {
    super(`${method} ${path} answered ${status}: ${describeDetail(detail)}`);
    this.name = 'SandboxServerError';
  }
}

/** No HTTP answer: connection refused, DNS failure, reset. `cause` is the network error. */
export class SandboxServerUnreachableError extends Error {
  constructor(
    readonly url: string,
    options: { cause: unknown },
  ) {
    super(`cannot reach ${url}: ${causeMessage(options.cause)}`, options);
    this.name = 'SandboxServerUnreachableError';
  }
}

/**
 * The event stream was closed for a reason reconnecting cannot fix: a wrong key (4001), an unknown
 * conversation (4004) or a malformed request (4400).
 */
export class EventStreamClosedError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
  ) {
    super(`event stream closed with ${code}: ${reason || 'no reason given'}`);
    this.name = 'EventStreamClosedError';
  }
}

/** One line for a `detail`: a text as is, validation items as `loc: msg` joined. */
export function describeDetail(detail: string | ValidationErrorItem[]): string {
  if (typeof detail === 'string') return detail;
  return detail.map((item) => `${item.loc.join('.')}: ${item.msg}`).join('; ');
}

function causeMessage(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as NodeJS.ErrnoException).code;
  return code && !cause.message.includes(code) ? `${code} ${cause.message}` : cause.message;
}
