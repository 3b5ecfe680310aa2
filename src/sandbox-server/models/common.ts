import { z } from '@hono/zod-openapi';
import { ErrorDetailSchema, ValidationErrorSchema } from '../../http/error-bodies.js';

/** The instants a PostgreSQL timestamp holds and JavaScript prints with a 4-digit year. */
const EARLIEST_MS = Date.parse('0001-01-01T00:00:00Z');
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** An ISO 8601 date-time a query can compare with stored timestamps: years 0001 to 9999. */
export function storableDateTime(options: { offset?: boolean; local?: boolean }) {
  return z.iso.datetime(options).refine((text) => {
    const ms = Date.parse(text);
    return ms >= EARLIEST_MS && ms <= LATEST_MS;
  }, 'Datetime must be between years 0001 and 9999');
}

/** Answer of write routes with nothing else to say. */
export const SuccessSchema = z.object({ success: z.literal(true) }).openapi('Success');

/** At most this many ids in one batch get; more is a 400, as in OpenHands' contract. */
export const MAX_BATCH_IDS = 100;

/** Repeated query ids: Hono hands over a single value as a string and repeated ones as an array. */
const RepeatedIdsSchema = z
  .preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(z.string()))
  .openapi({ type: 'array', items: { type: 'string' }, description: `Ids to fetch (at most ${MAX_BATCH_IDS}).` });

/**
 * `?id=a&id=b` for sandboxes and specs, `?ids=a&ids=b` for app conversations and start tasks, as
 * OpenHands names them. The count is checked by the service (a 400, not a 422).
 */
export const BatchIdsQuerySchema = z.object({ id: RepeatedIdsSchema });
export const BatchIdsPluralQuerySchema = z.object({ ids: RepeatedIdsSchema });

export { ErrorDetailSchema, ValidationErrorSchema };

/** The error answers every /api route may give, for the OpenAPI document. */
export function errorResponses<const S extends number>(...statuses: S[]) {
  const descriptions: Record<number, string> = {
    400: 'Bad request',
    401: 'Missing or invalid API key',
    403: 'The key may not do this (an admin key is needed)',
    404: 'Not found',
    409: 'Conflict with the current state',
    429: 'Too many open at once for this API key',
  };
  const responses = {} as Record<S | 422, { description: string; content: { 'application/json': { schema: z.ZodType } } }>;
  for (const status of statuses) {
    responses[status] = { description: descriptions[status] ?? 'Error', content: { 'application/json': { schema: ErrorDetailSchema } } };
  }
  responses[422] = { description: 'Validation error', content: { 'application/json': { schema: ValidationErrorSchema } } };
  return responses;
}
