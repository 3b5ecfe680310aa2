import { z } from 'zod';
import {
  AgentSchema,
  ConfirmationPolicySchema,
  ConversationExecutionStatusSchema,
  TagsSchema,
  type StartConversationRequest,
} from '../../contracts/agent-server/conversation-requests.js';
import { ConversationStatsSchema } from '../../contracts/agent-server/llm-metrics.js';

/**
 * What `meta.json` holds for one conversation: the settings it was started with (secrets and the
 * LLM key included, because the agent loop needs them; they never leave the server) and its state.
 */
export const ConversationMetadataSchema = z.object({
  id: z.string(),
  agent: AgentSchema,
  workspace: z.object({ kind: z.literal('LocalWorkspace'), working_dir: z.string() }),
  confirmation_policy: ConfirmationPolicySchema,
  max_iterations: z.int().min(1),
  stuck_detection: z.boolean(),
  /** US dollars its LLM calls may cost; null for no limit. */
  max_budget_per_task: z.number().nullable().default(null),
  /** What its LLM calls used and cost so far, per usage_id. */
  stats: ConversationStatsSchema.default({ usage_to_metrics: {} }),
  /** As sent (SecretsSchema); read loosely so that a secret of a kind no longer known never hides the conversation. */
  secrets: z.record(z.string(), z.union([z.string(), z.looseObject({})])),
  title: z.string().nullable(),
  tags: TagsSchema,
  /** Knowledge skills user messages brought in so far; each joins the conversation once. */
  activated_knowledge_skills: z.array(z.string()).default([]),
  execution_status: ConversationExecutionStatusSchema,
  created_at: z.string(),
  updated_at: z.string(),
});
export type ConversationMetadata = z.output<typeof ConversationMetadataSchema>;

export function newConversationMetadata(id: string, request: StartConversationRequest, now: string): ConversationMetadata {
  return {
    id,
    agent: request.agent,
    workspace: { kind: 'LocalWorkspace', working_dir: request.workspace.working_dir },
    confirmation_policy: request.confirmation_policy,
    max_iterations: request.max_iterations,
    stuck_detection: request.stuck_detection,
    max_budget_per_task: request.max_budget_per_task ?? null,
    stats: { usage_to_metrics: {} },
    secrets: request.secrets,
    title: request.title ?? null,
    tags: request.tags,
    activated_knowledge_skills: [],
    execution_status: 'idle',
    created_at: now,
    updated_at: now,
  };
}
