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
 * Reads a response's JSON body and checks it against `schema`: the route's model for a success,
 * ErrorBodySchema for a refusal. A body that does not fit fails the test, with the status and the
 * body, so every typed call also checks the wire shape. The body is the one sent, not the parse's
 * output (which would drop unknown keys a test comparing it whole must see), typed as the schema's
 * input: the shape it was just checked to have. Without a schema the body is `unknown`.
 */
export async function readAnswer<S extends z.ZodType = z.ZodUnknown>(response: Response, schema?: S): Promise<Answer<z.input<S>>> {
  const text = await response.text();
  const body: unknown = text === '' ? undefined : JSON.parse(text);
  const checked = schema?.safeParse(body);
  if (checked && !checked.success) {
    throw new Error(`the answer ${response.status} ${text.slice(0, 2000)} does not fit the expected body: ${z.prettifyError(checked.error)}`);
  }
  // Checked just above to have that shape (without a schema, the type is unknown).
  return { status: response.status, body: body as z.input<S> };
}
