import type { AgentClient } from '../../agent-client.js';
import type { AgentServerTarget } from '../../agent-client.js';
import type { ServiceContext } from '../context.js';

/** Server-wide defaults for the conversations the control plane starts. */
export interface AppConversationSettings {
  llm: { model: string | null; baseUrl: string | null; apiKey: string | null };
  /** How long a start task waits for its sandbox's agent-server before failing. */
  sandboxStartTimeoutMs: number;
}

export interface AppConversationContext extends ServiceContext {
  settings: AppConversationSettings;
  agentClient(target: AgentServerTarget, options?: { timeoutMs?: number }): AgentClient;
}
