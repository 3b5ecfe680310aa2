import { z } from '@hono/zod-openapi';

/** The body of every error but a validation error, as FastAPI answers: `{"detail": "..."}`. */
export const ErrorDetailSchema = z.object({ detail: z.string() }).openapi('ErrorDetail');

/** The body of a 422, FastAPI's HTTPValidationError: `{"detail": [{loc, msg, type}]}`. */
export const ValidationErrorSchema = z
  .object({
    detail: z.array(
      z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() }).openapi('ValidationError'),
    ),
  })
  .openapi('HTTPValidationError');
