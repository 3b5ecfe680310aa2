/**
 * What services, stores and clients throw when a request cannot be served: a code saying what kind
 * of failure it is, and the facts. They never name an HTTP status; `src/http/errors.ts` is the one
 * place that turns a code into a status and a FastAPI body.
 */
export type ErrorCode =
  /** The request cannot be served as asked (e.g. more ids than a batch allows). */
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  /** The thing exists but its state forbids the request (a deleted sandbox, a paused one). */
  | 'conflict'
  /** Input values fail a check; `invalid` says which and why. */
  | 'invalid'
  /** The route speaks another protocol (WebSocket) than the request used. */
  | 'upgrade_required'
  /** A sandbox's agent-server failed or could not be reached. */
  | 'upstream'
  /** Something we depend on (the database, a sandbox coming up) is not available now. */
  | 'unavailable'
  /** We waited as long as the caller allowed and the work is not done. */
  | 'timeout'
  /** The request body is larger than the server accepts. */
  | 'too_large'
  /** The caller has as many of something open as it may (e.g. event streams). */
  | 'too_many';

/** The part of a request a value came in, named as OpenAPI names a parameter's `in` (plus the body). */
export type InputPart = 'body' | 'query' | 'path' | 'header' | 'cookie';

/**
 * One input value that failed a check: the part it came in, the field within that part, and why.
 * These are facts; the HTTP error mapper composes FastAPI's `{loc, msg, type}` from them.
 */
export interface InvalidValue {
  in: InputPart;
  /** The field within the part, outermost first (`['page_id']`, `[3, 'id']`); empty for the part as a whole. */
  field: (string | number)[];
  /** What is wrong, for people. */
  msg: string;
  /** What kind of problem, for programs, in pydantic's words (`missing`, `value_error`, `json_invalid`). */
  type: string;
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** For `invalid`: every value that failed, in input order. */
    readonly invalid: InvalidValue[] = [],
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends DomainError {
  constructor(message: string) {
    super('bad_request', message);
  }
}

export class UnauthorizedError extends DomainError {
  constructor(message = 'Unauthorized') {
    super('unauthorized', message);
  }
}

export class ForbiddenError extends DomainError {
  constructor(message = 'Forbidden') {
    super('forbidden', message);
  }
}

export class NotFoundError extends DomainError {
  constructor(message = 'Not Found') {
    super('not_found', message);
  }
}

export class ConflictError extends DomainError {
  constructor(message: string) {
    super('conflict', message);
  }
}

export class RequestValidationError extends DomainError {
  constructor(invalid: InvalidValue[]) {
    super('invalid', 'Request validation failed', invalid);
  }
}

export class UpstreamError extends DomainError {
  constructor(message: string) {
    super('upstream', message);
  }
}

export class UnavailableError extends DomainError {
  constructor(
    message: string,
    /** When it is worth asking again; set for a dependency that is restarting and will be back. */
    readonly retryAfterSeconds?: number,
  ) {
    super('unavailable', message);
  }
}

export class TimedOutError extends DomainError {
  constructor(message: string) {
    super('timeout', message);
  }
}

export class RequestBodyTooLargeError extends DomainError {
  constructor(maxBytes: number) {
    super('too_large', `Request body is larger than ${maxBytes} bytes`);
  }
}

export class TooManyError extends DomainError {
  constructor(message: string) {
    super('too_many', message);
  }
}

/** A validation failure of one value, for checks zod schemas cannot express (e.g. duplicate ids). */
export function validationError(part: InputPart, field: (string | number)[], msg: string, type = 'value_error'): RequestValidationError {
  return new RequestValidationError([{ in: part, field, msg, type }]);
}
