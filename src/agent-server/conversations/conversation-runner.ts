import { join, resolve } from 'node:path';
import type { AgentUser } from '../agent-user.js';
import { createAgentFs } from '../agent-fs/index.js';
import type { Event, TaskItem } from '../../events/index.js';
import { ConflictError } from '../../errors/index.js';
import { createAgentRunner, type AgentRunner, type CondenserOptions, type RunnerStateChange } from '../agent/index.js';
import { createLlmClient, llmConfigFrom, type LlmConfig, type LlmDelta } from '../agent/llm/index.js';
import { openConversationTools } from './conversation-tools.js';
import type { EventLog } from '../store/index.js';
import type { ConversationMetadata } from './metadata.js';
import { z } from 'zod';
import { LlmSchema, type Llm } from '../../contracts/agent-server/llm-settings.js';
import type { ConversationStats } from '../../contracts/agent-server/llm-metrics.js';
import type { CallRecord } from '../agent/llm/usage-metrics.js';
import type { SecretVault } from '../secrets/secret-vault.js';
import { systemMessage } from '../instructions/system-message.js';
import type { ConversationInstructions } from '../instructions/conversation-skills.js';

/** What the registry hears from a runner besides state changes: its LLM usage. */
export interface RunnerAccounting {
  onStats(stats: ConversationStats): void;
  onCall(call: CallRecord): void;
  /** A piece of the agent LLM's streamed answer, for the live subscribers. */
  onDelta(delta: LlmDelta): void;
}

/**
 * The agent loop of one conversation, built from the settings it was started with: its LLM
 * (agent.llm), the tools it chose (agent.tools, filter_tools_regex, include_default_tools) working
 * in its workspace, its confirmation policy, iteration cap and condenser (agent.condenser,
 * OpenHands' LLMSummarizingCondenser fields), its budget and stuck detection.
 */
export async function createConversationRunner(
  metadata: ConversationMetadata,
  log: EventLog<Event>,
  onStateChange: (change: RunnerStateChange) => void,
  accounting: RunnerAccounting,
  agentUser?: AgentUser,
  secrets?: SecretVault,
  instructions?: ConversationInstructions,
): Promise<AgentRunner> {
  const workspaceDir = metadata.workspace.working_dir;
  const files = createAgentFs({ user: agentUser });
  // Made with the agent's rights: the agent may plant links on the way to where it will work.
  await files.makeDirs(resolve(workspaceDir)).catch((error: unknown) => {
    // The workspace was named by the client (a file, a path too long, a place the agent may not write).
    throw new ConflictError(`The conversation's workspace ${workspaceDir} cannot be used: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  });
  const llm = metadata.agent.llm;
  const condenser = condenserOf(metadata.agent.condenser, llm.max_input_tokens ?? null);
  return createAgentRunner({
    conversationId: metadata.id,
    log,
    llm: createLlmClient(llmConfigOf(metadata)),
    tools: await openConversationTools(metadata.agent, log, {
      workspaceDir,
      agentUser,
      files,
      initialTasks: await lastTaskList(log),
      secrets,
    }),
    maxIterations: metadata.max_iterations,
    systemPrompt: systemMessage({
      instructions: instructions?.skills.filter((skill) => skill.type === 'repo'),
      secrets: secrets?.infos(),
      suffix: instructions?.systemMessageSuffix,
    }),
    confirmationPolicy: metadata.confirmation_policy,
    logCompletions: llm.log_completions === true,
    // Written with the agent's rights: the folder is in the workspace, where the agent may plant links.
    saveCompletionLog: llm.log_completions_folder
      ? async (name, data) => void (await files.writeFile(join(resolve(workspaceDir, llm.log_completions_folder!), name), data, { makeParents: true }))
      : null,
    condenser: condenser?.options ?? null,
    condenserLlm: condenser?.llm ? createLlmClient(llmConfigFrom(condenser.llm)) : null,
    usageId: llm.usage_id ?? undefined,
    stats: metadata.stats,
    onStats: accounting.onStats,
    onCall: accounting.onCall,
    onDelta: llm.stream === true ? accounting.onDelta : undefined,
    maxBudgetPerTask: metadata.max_budget_per_task,
    stuckDetection: metadata.stuck_detection,
    onStateChange,
  });
}

/** The LLM client settings of a conversation, from its agent.llm (OpenHands' field names). */
export function llmConfigOf(metadata: ConversationMetadata): LlmConfig {
  return llmConfigFrom(metadata.agent.llm);
}

/** OpenHands' LLMSummarizingCondenser defaults. */
const CONDENSER_DEFAULTS = { maxEvents: 240, keepFirst: 2 };

/**
 * The condenser (agent.condenser: max_size, max_tokens, keep_first and its own llm). Without one,
 * the agent LLM's max_input_tokens alone still keeps the view under that many tokens.
 */
function condenserOf(condenser: unknown, maxInputTokens: number | null): { options: CondenserOptions; llm: Llm | null } | null {
  const parsed = CondenserSettingsSchema.safeParse(condenser);
  if (!parsed.success || !parsed.data) {
    return maxInputTokens === null ? null : { options: { ...CONDENSER_DEFAULTS, maxEvents: Number.MAX_SAFE_INTEGER, maxTokens: maxInputTokens }, llm: null };
  }
  const { max_size: maxEvents, keep_first: keepFirst, max_tokens: maxTokens, llm } = parsed.data;
  return {
    options: {
      maxEvents: maxEvents ?? CONDENSER_DEFAULTS.maxEvents,
      keepFirst: keepFirst ?? CONDENSER_DEFAULTS.keepFirst,
      maxTokens: maxTokens ?? maxInputTokens,
    },
    llm: LlmSchema.safeParse(llm).data ?? null,
  };
}

const CondenserSettingsSchema = z
  .looseObject({
    max_size: z.int().nullish(),
    keep_first: z.int().nullish(),
    max_tokens: z.int().nullish(),
    // Read apart: a condenser whose LLM we cannot read still condenses, with the agent's LLM.
    llm: z.unknown(),
  })
  .nullish();

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
