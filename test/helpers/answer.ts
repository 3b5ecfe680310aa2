import { isDeepStrictEqual } from 'node:util';
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
 * `value` checked to have exactly the shape of `schema`, or a failure naming what does not fit:
 * it parses, and parsing changes nothing (no key the model lacks, none it would fill with a
 * default), so it is the schema's output as it was sent.
 */
export function checked<S extends z.ZodType>(schema: S, value: unknown, what = 'the value'): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new Error(`${what} does not fit the expected shape: ${z.prettifyError(result.error)}`);
  if (!isDeepStrictEqual(result.data, value)) {
    throw new Error(`${what} is not exactly the expected shape: as parsed, it is ${JSON.stringify(result.data).slice(0, 2000)}`);
  }
  return result.data;
}

/**
 * Reads a response's JSON body, checked against `schema`: the route's model for a success,
 * ErrorBodySchema (or one of its two) for a refusal. So every typed call also checks the wire
 * shape, and a wrong status fails with the status and the body. Without a schema the body is
 * `unknown`, for tests that only compare it whole.
 */
export async function readAnswer<S extends z.ZodType = z.ZodUnknown>(response: Response, schema?: S): Promise<Answer<z.output<S>>> {
  const text = await response.text();
  const body: unknown = text === '' ? undefined : JSON.parse(text);
  if (schema) return { status: response.status, body: checked(schema, body, `the answer ${response.status} ${text.slice(0, 2000)}`) };
  // Without a schema S is ZodUnknown: the body is typed unknown, as it is.
  return { status: response.status, body: body as z.output<S> };
}
