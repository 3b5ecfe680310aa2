import type { AgentClient } from '../../agent-client.js';
import type { AgentServerTarget } from '../../agent-client.js';
import type { ServiceContext } from '../context.js';

/** Server-wide defaults for the conversations the control plane starts. */
export interface AppConversationSettings {
  /** LLM_MODEL and LLM_BASE_URL; the key (LLM_API_KEY) is the LLM relay's alone. */
  llm: { model: string | null; baseUrl: string | null };
  /** The LLM relay as the sandboxes reach it (`http://host:port`): their agents' base_url starts with it. */
  llmRelay: { origin: string };
  /** How long a start task waits for its sandbox's agent-server before failing. */
  sandboxStartTimeoutMs: number;
}

export interface AppConversationContext extends ServiceContext {
  settings: AppConversationSettings;
  agentClient(target: AgentServerTarget, options?: { timeoutMs?: number }): AgentClient;
}
