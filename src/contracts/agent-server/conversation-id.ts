import { z } from 'zod';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isConversationId(value: string): boolean {
  return UUID.test(value);
}

/**
 * A conversation id: a UUID of any version (as Python's UUID accepts), kept lower-case so one
 * conversation has one spelling, which is also the name of its directory on disk.
 */
export const ConversationIdSchema = z
  .string()
  .check((ctx) => {
    if (!isConversationId(ctx.value)) {
      ctx.issues.push({ code: 'invalid_format', format: 'uuid', input: ctx.value, message: 'Input should be a valid UUID' });
    }
  })
  .transform((value) => value.toLowerCase())
  .meta({ format: 'uuid', example: '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f' });
