import { resolve } from 'node:path';
import type { AgentUser } from '../agent-user.js';
import { createAgentFs } from '../agent-fs/index.js';
import type { Event, JsonValue, TaskItem } from '../../events/index.js';
import { ConflictError } from '../../errors/index.js';
import { createAgentRunner, type AgentRunner, type CondenserOptions } from '../agent/index.js';
import { createLlmClient, type LlmConfig } from '../agent/llm/index.js';
import { createConversationTools } from '../agent/tools/index.js';
import type { EventLog } from '../store/index.js';
import type { Llm } from '../../contracts/agent-server/conversation-requests.js';
import type { ConversationMetadata } from './metadata.js';

/**
 * The agent loop of one conversation, built from the settings it was started with: its LLM
 * (agent.llm), the tools it chose (agent.tools, filter_tools_regex, include_default_tools) working
 * in its workspace, its confirmation policy, iteration cap and condenser (agent.condenser,
 * OpenHands' LLMSummarizingCondenser fields).
 */
export async function createConversationRunner(
  metadata: ConversationMetadata,
  log: EventLog<Event>,
  onStateChange: (key: string, value: JsonValue) => void,
  agentUser?: AgentUser,
): Promise<AgentRunner> {
  const workspaceDir = metadata.workspace.working_dir;
  const files = createAgentFs({ user: agentUser });
  // Made with the agent's rights: the agent may plant links on the way to where it will work.
  await files.makeDirs(resolve(workspaceDir)).catch((error: unknown) => {
    // The workspace was named by the client (a file, a path too long, a place the agent may not write).
    throw new ConflictError(`The conversation's workspace ${workspaceDir} cannot be used: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  });
  return createAgentRunner({
    conversationId: metadata.id,
    log,
    llm: createLlmClient(llmConfigOf(metadata)),
    tools: await createConversationTools(metadata.agent, {
      workspaceDir,
      agentUser,
      files,
      initialTasks: await lastTaskList(log),
    }),
    maxIterations: metadata.max_iterations,
    confirmationPolicy: metadata.confirmation_policy,
    logCompletions: metadata.agent.llm.log_completions === true,
    condenser: condenserOf(metadata.agent.condenser),
    onStateChange,
  });
}

/** The LLM client settings of a conversation, from its agent.llm (OpenHands' field names). */
export function llmConfigOf(metadata: ConversationMetadata): LlmConfig {
  return llmConfigFrom(metadata.agent.llm);
}

/** The client settings of an LLM as OpenHands describes one (timeout in seconds, num_retries, ...). */
export function llmConfigFrom(llm: Llm): LlmConfig {
  const number = (value: unknown) => (typeof value === 'number' ? value : undefined);
  return {
    model: llm.model,
    base_url: llm.base_url ?? null,
    api_key: llm.api_key ?? null,
    timeout_ms: number(llm.timeout) === undefined ? undefined : (number(llm.timeout) as number) * 1000,
    max_retries: number(llm.num_retries),
    temperature: number(llm.temperature),
    max_output_tokens: number(llm.max_output_tokens),
  };
}

function condenserOf(condenser: unknown): CondenserOptions | null {
  if (typeof condenser !== 'object' || condenser === null) return null;
  const { max_size: maxEvents, keep_first: keepFirst } = condenser as { max_size?: unknown; keep_first?: unknown };
  if (typeof maxEvents !== 'number') return null;
  return { maxEvents, keepFirst: typeof keepFirst === 'number' ? keepFirst : 4 };
}

/** How many recent observations are searched for the last plan; older plans are stale anyway. */
const TASK_LIST_SEARCH_PAGES = 10;

/**
 * The task list the agent last planned, so a conversation reopened after a restart keeps its plan:
 * the newest task_tracker observation among the recent ones, walking newest first.
 */
async function lastTaskList(log: EventLog<Event>): Promise<TaskItem[] | undefined> {
  let pageId: string | undefined;
  for (let page = 0; page < TASK_LIST_SEARCH_PAGES; page++) {
    const found = await log.search({ kind: 'ObservationEvent', sortOrder: 'TIMESTAMP_DESC', limit: 100, pageId });
    for (const event of found.items) {
      if (event.kind === 'ObservationEvent' && event.observation.kind === 'TaskTrackerObservation') return event.observation.task_list;
    }
    pageId = found.nextPageId ?? undefined;
    if (!pageId) return undefined;
  }
  return undefined;
}
