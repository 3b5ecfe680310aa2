import { z } from '@hono/zod-openapi';

export const GitQuerySchema = z.object({
  path: z.string().min(1).openapi({ description: 'A directory in the repository (changes) or a file (diff); relative to the workspace' }),
  ref: z
    .string()
    .min(1)
    .regex(/^[^-]/, 'must not start with "-"')
    .optional()
    .openapi({ description: 'What to compare with; HEAD by default (the empty tree before the first commit)' }),
});
