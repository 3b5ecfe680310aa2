/** Bodies of the bash route, named and shaped after OpenHands' ExecuteBashRequest and BashOutput. */
import { z } from '@hono/zod-openapi';

/** OpenHands' default: a command may run five minutes unless the request says otherwise. */
export const DEFAULT_TIMEOUT_SECONDS = 300;

export const ExecuteBashRequestSchema = z
  .object({
    command: z.string().min(1).openapi({ description: 'The bash command to execute', example: 'ls -la' }),
    cwd: z.string().min(1).nullish().openapi({ description: 'Working directory; relative paths and absence mean the workspace' }),
    timeout: z.int().min(1).default(DEFAULT_TIMEOUT_SECONDS).openapi({ description: 'Seconds the command may run before it is killed' }),
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
