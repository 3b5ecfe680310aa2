import { z } from 'zod';
import { ErrorDetailSchema, ValidationErrorSchema } from '../../src/sandbox-server/models/common.js';

export { ErrorDetailSchema, ValidationErrorSchema };

/** What every refusal of both servers carries: FastAPI's `{"detail": "..."}`, or a 422's list. */
export const ErrorBodySchema = z.union([ErrorDetailSchema, ValidationErrorSchema]);
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** A response's status and its JSON body (undefined when it had none). */
export interface Answer<T> {
  status: number;
  body: T;
}

/**
 * `value` checked against `schema`, or a failure naming what does not fit. The value itself is
 * answered, not the parse's output (which would drop unknown keys a test comparing it whole must
 * see), typed as the schema's input: the shape it was just checked to have.
 */
export function checked<S extends z.ZodType>(schema: S, value: unknown, what = 'the value'): z.input<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new Error(`${what} does not fit the expected shape: ${z.prettifyError(result.error)}`);
  return value as z.input<S>;
}

/**
 * Reads a response's JSON body, checked against `schema`: the route's model for a success,
 * ErrorBodySchema (or one of its two) for a refusal. So every typed call also checks the wire
 * shape, and a wrong status fails with the status and the body. Without a schema the body is
 * `unknown`, for tests that only compare it whole.
 */
export async function readAnswer<S extends z.ZodType = z.ZodUnknown>(response: Response, schema?: S): Promise<Answer<z.input<S>>> {
  const text = await response.text();
  const body: unknown = text === '' ? undefined : JSON.parse(text);
  if (schema) return { status: response.status, body: checked(schema, body, `the answer ${response.status} ${text.slice(0, 2000)}`) };
  // Without a schema S is ZodUnknown: the body is typed unknown, as it is.
  return { status: response.status, body: body as z.input<S> };
}
