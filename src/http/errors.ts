import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { logger } from '../logger.js';

/** One entry of a FastAPI HTTPValidationError body: `{"detail":[{loc,msg,type}]}`. */
export interface ValidationErrorItem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/**
 * The one error type services throw. Routes never build error bodies themselves: `handleError`
 * turns every ApiError into `{"detail": ...}` with its status, so the wire shape lives in one place.
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly detail: string | ValidationErrorItem[],
  ) {
    super(typeof detail === 'string' ? detail : 'Request validation failed');
    this.name = new.target.name;
  }
}

export class BadRequestError extends ApiError {
  constructor(detail: string) {
    super(400, detail);
  }
}

export class UnauthorizedError extends ApiError {
  constructor(detail = 'Unauthorized') {
    super(401, detail);
  }
}

export class ForbiddenError extends ApiError {
  constructor(detail = 'Forbidden') {
    super(403, detail);
  }
}

export class NotFoundError extends ApiError {
  constructor(detail = 'Not Found') {
    super(404, detail);
  }
}

export class ConflictError extends ApiError {
  constructor(detail: string) {
    super(409, detail);
  }
}

/** An upstream we depend on (a sandbox's agent-server) failed or could not be reached. */
export class BadGatewayError extends ApiError {
  constructor(detail: string) {
    super(502, detail);
  }
}

export class ServiceUnavailableError extends ApiError {
  constructor(detail: string) {
    super(503, detail);
  }
}

export class RequestValidationError extends ApiError {
  constructor(readonly items: ValidationErrorItem[]) {
    super(422, items);
  }
}

/** Where a value came from, named as FastAPI names it in `loc[0]`. */
export type ValidationTarget = 'body' | 'query' | 'path' | 'header' | 'cookie';

const HONO_TARGETS: Record<string, ValidationTarget> = {
  json: 'body',
  form: 'body',
  query: 'query',
  param: 'path',
  header: 'header',
  cookie: 'cookie',
};

export function validationTargetOf(honoTarget: string): ValidationTarget {
  return HONO_TARGETS[honoTarget] ?? 'body';
}

/** Maps zod issues to FastAPI-style entries so OpenHands clients can read them unchanged. */
export function validationItemsFromZod(
  error: z.ZodError,
  locPrefix: (string | number)[],
): ValidationErrorItem[] {
  const items: ValidationErrorItem[] = [];
  for (const issue of error.issues) {
    const loc = [...locPrefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        items.push({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      }
      continue;
    }
    if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) {
      items.push({ loc, msg: 'Field required', type: 'missing' });
      continue;
    }
    items.push({ loc, msg: issue.message, type: issueType(issue) });
  }
  return items;
}

function issueType(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `${issue.expected}_type`;
    case 'too_small':
      return issue.origin === 'string' || issue.origin === 'array' ? 'too_short' : issue.inclusive ? 'greater_than_equal' : 'greater_than';
    case 'too_big':
      return issue.origin === 'string' || issue.origin === 'array' ? 'too_long' : issue.inclusive ? 'less_than_equal' : 'less_than';
    case 'invalid_value':
      return 'enum';
    case 'invalid_format':
      return `${issue.format}_parsing`;
    case 'invalid_union':
      return 'union_tag_invalid';
    default:
      return 'value_error';
  }
}

/** A validation failure of one value, for checks zod schemas cannot express (e.g. duplicate ids). */
export function validationError(loc: (string | number)[], msg: string, type = 'value_error'): RequestValidationError {
  return new RequestValidationError([{ loc, msg, type }]);
}

/**
 * `defaultHook` for OpenAPIHono: every request validated by a route schema that fails becomes a 422
 * HTTPValidationError with `loc` starting at body / query / path, as FastAPI does.
 */
export function validationHook(
  result: { success: true; data: unknown; target: string } | { success: false; error: z.ZodError; target: string },
): void {
  if (!result.success) {
    throw new RequestValidationError(validationItemsFromZod(result.error, [validationTargetOf(result.target)]));
  }
}

/** `app.onError`: the single place where failures become HTTP answers. */
export function handleError(err: Error, c: Context): Response {
  if (err instanceof ApiError) {
    return c.json({ detail: err.detail }, err.status);
  }
  if (err instanceof HTTPException) {
    // Hono's JSON validator rejects unparsable bodies with a 400; FastAPI calls that a 422.
    if (err.status === 400 && /json/i.test(err.message)) {
      return c.json({ detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] }, 422);
    }
    return c.json({ detail: err.message || 'Error' }, err.status);
  }
  // The request's own logger carries its request id, when the request logger set one.
  const log = (c.get('logger') as typeof logger | undefined) ?? logger;
  log.error({ err, method: c.req.method, path: c.req.path }, 'unhandled error');
  return c.json({ detail: 'Internal Server Error' }, 500);
}

/** `app.notFound`: FastAPI's body for an unknown route. */
export function handleNotFound(c: Context): Response {
  return c.json({ detail: 'Not Found' }, 404);
}
