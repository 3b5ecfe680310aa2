/** Bodies of the bash route, named and shaped after OpenHands' ExecuteBashRequest and BashOutput. */
import { z } from '@hono/zod-openapi';

/** OpenHands' default: a command may run five minutes unless the request says otherwise. */
export const DEFAULT_TIMEOUT_SECONDS = 300;
/** The longest timer Node can set (2^31-1 ms); a longer one would fire at once. */
const MAX_TIMEOUT_SECONDS = 2_147_483;

/** A process's argv cannot carry a NUL byte: bash would never see the command as sent. */
const hasNoNul = (text: string): boolean => !text.includes('\0');
const NUL_MESSAGE = 'Must not contain NUL bytes';

export const ExecuteBashRequestSchema = z
  .object({
    command: z
      .string()
      .min(1)
      .refine(hasNoNul, NUL_MESSAGE)
      .openapi({ description: 'The bash command to execute', example: 'ls -la' }),
    cwd: z.string().min(1).refine(hasNoNul, NUL_MESSAGE).nullish().openapi({ description: 'Working directory; relative paths and absence mean the workspace' }),
    timeout: z
      .int()
      .min(1)
      .max(MAX_TIMEOUT_SECONDS)
      .default(DEFAULT_TIMEOUT_SECONDS)
      .openapi({ description: 'Seconds the command may run before it is killed' }),
  })
  .openapi('ExecuteBashRequest');
export type ExecuteBashRequest = z.input<typeof ExecuteBashRequestSchema>;

export const BashOutputSchema = z
  .object({
    id: z.string(),
    timestamp: z.string().openapi({ format: 'date-time' }),
    kind: z.literal('BashOutput'),
    command_id: z.string(),
    /** Output comes in one piece here, so always 0; OpenHands streams several when it is large. */
    order: z.int(),
    /** -1 when the command was killed for running past its timeout. */
    exit_code: z.int().nullable(),
    stdout: z.string().nullable(),
    stderr: z.string().nullable(),
  })
  .openapi('BashOutput');
export type BashOutput = z.output<typeof BashOutputSchema>;

export const BashCommandSchema = z
  .object({
    id: z.string(),
    timestamp: z.string().openapi({ format: 'date-time' }),
    kind: z.literal('BashCommand'),
    command: z.string(),
    cwd: z.string().nullable(),
    timeout: z.int(),
  })
  .openapi('BashCommand');
export type BashCommand = z.output<typeof BashCommandSchema>;

/** What /api/bash stores and streams: each command started, then its output. */
export const BashEventSchema = z.discriminatedUnion('kind', [BashCommandSchema, BashOutputSchema]).openapi('BashEvent');
export type BashEvent = z.output<typeof BashEventSchema>;
