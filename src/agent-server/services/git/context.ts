import type { AgentUser } from '../../agent-user.js';

/** What the git verbs need; built once by the app. */
export interface GitContext {
  /** What relative paths are resolved against. */
  workspaceDir: string;
  /** Who git runs as (see git-command.ts); this process's user when absent. */
  agentUser?: AgentUser;
}
