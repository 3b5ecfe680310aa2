import { z } from '@hono/zod-openapi';
import type { AgentUser } from '../../agent-user.js';

export const GitQuerySchema = z.object({
  path: z.string().min(1).openapi({ description: 'A directory in the repository (changes) or a file (diff); relative to the workspace' }),
  ref: z
    .string()
    .min(1)
    .regex(/^[^-]/, 'must not start with "-"')
    .optional()
    .openapi({ description: 'What to compare with; HEAD by default (the empty tree before the first commit)' }),
});

export interface GitRoutesOptions {
  /** What relative paths are resolved against. */
  workspaceDir: string;
  /** Who git runs as (see git-command.ts); this process's user when absent. */
  agentUser?: AgentUser;
}
