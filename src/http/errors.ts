import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { DomainError, type ErrorCode, type InputPart, type InvalidValue, RequestValidationError, UnavailableError, invalidValuesFromZod } from '../errors/index.js';
import { logger } from '../logger.js';

/** One entry of a FastAPI HTTPValidationError body: `{"detail":[{loc,msg,type}]}`. */
export interface ValidationErrorItem {
  /** The part of the request (body, query, path, ...), then the field within it. */
  loc: (string | number)[];
  msg: string;
  type: string;
}

function validationErrorItem(value: InvalidValue): ValidationErrorItem {
  return { loc: [value.in, ...value.field], msg: value.msg, type: value.type };
}

/** The one mapping from domain error codes to HTTP statuses. */
const STATUS_OF: Record<ErrorCode, ContentfulStatusCode> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  invalid: 422,
  upgrade_required: 426,
  upstream: 502,
  unavailable: 503,
  timeout: 504,
  too_large: 413,
  too_many: 429,
};

export function statusOf(code: ErrorCode): ContentfulStatusCode {
  return STATUS_OF[code];
}

const HONO_TARGETS: Record<string, InputPart> = {
  json: 'body',
  form: 'body',
  query: 'query',
  param: 'path',
  header: 'header',
  cookie: 'cookie',
};

export function validationTargetOf(honoTarget: string): InputPart {
  return HONO_TARGETS[honoTarget] ?? 'body';
}

/**
 * `defaultHook` for OpenAPIHono: every request validated by a route schema that fails becomes a 422
 * HTTPValidationError with `loc` starting at body / query / path, as FastAPI does.
 */
export function validationHook(
  result: { success: true; data: unknown; target: string } | { success: false; error: z.ZodError; target: string },
): void {
  if (!result.success) {
    throw new RequestValidationError(invalidValuesFromZod(result.error, validationTargetOf(result.target)));
  }
}

/** A DomainError's status, FastAPI body and headers; for handlers that answer outside Hono too. */
export function domainErrorAnswer(err: DomainError): {
  status: ContentfulStatusCode;
  body: { detail: string | ValidationErrorItem[] };
  headers: Record<string, string>;
} {
  const retryAfter = err instanceof UnavailableError ? err.retryAfterSeconds : undefined;
  return {
    status: statusOf(err.code),
    body: { detail: err.code === 'invalid' ? err.invalid.map(validationErrorItem) : err.message },
    headers: retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) },
  };
}

/** `app.onError`: the single place where failures become HTTP answers. */
export function handleError(err: Error, c: Context): Response {
  // The request's own logger carries its request id, when the request logger set one.
  const log = (c.get('logger') as typeof logger | undefined) ?? logger;
  err = domainErrorWithin(err) ?? err;
  if (err instanceof DomainError) {
    const answer = domainErrorAnswer(err);
    for (const [name, value] of Object.entries(answer.headers)) c.header(name, value);
    return c.json(answer.body, answer.status);
  }
  if (err instanceof HTTPException) {
    // Hono's JSON validator rejects unparsable bodies with a 400; FastAPI calls that a 422.
    if (err.status === 400 && /json/i.test(err.message)) {
      return c.json({ detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] }, 422);
    }
    if (err.status === 415) {
      // The route validator's bare "Unsupported Media Type" leaves the client guessing: every body the servers parse themselves is JSON.
      return c.json({ detail: 'Unsupported Media Type: send the request body as JSON, with the header "Content-Type: application/json"' }, 415);
    }
    return c.json({ detail: err.message || 'Error' }, err.status);
  }
  log.error({ err, method: c.req.method, path: c.req.path }, 'unhandled error');
  return c.json({ detail: 'Internal Server Error' }, 500);
}

/**
 * Our DomainError, even when a library wrapped it: drizzle wraps whatever its driver throws, so the
 * database client's UnavailableError arrives as the cause of a DrizzleQueryError.
 */
function domainErrorWithin(error: unknown): DomainError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof DomainError) return current;
    current = current.cause;
  }
  return undefined;
}

/** `app.notFound`: FastAPI's body for an unknown route. */
export function handleNotFound(c: Context): Response {
  return c.json({ detail: 'Not Found' }, 404);
}
