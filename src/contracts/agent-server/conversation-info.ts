import { z } from 'zod';
import { pageSchema } from '../paging.js';
import { ConversationStatsSchema, MetricsSnapshotSchema } from './llm-metrics.js';
import { AgentSchema, ConfirmationPolicySchema, ConversationExecutionStatusSchema, TagsSchema } from './conversation-requests.js';

/**
 * OpenHands' ConversationInfo, as far as this server knows it: what clients read to show and resume
 * a conversation. Secrets are left out and keys are masked.
 */
export const ConversationInfoSchema = z.object({
  id: z.string(),
  agent: AgentSchema,
  workspace: z.object({ kind: z.literal('LocalWorkspace'), working_dir: z.string() }),
  execution_status: ConversationExecutionStatusSchema,
  confirmation_policy: ConfirmationPolicySchema,
  max_iterations: z.int(),
  stuck_detection: z.boolean(),
  title: z.string().nullable(),
  tags: TagsSchema,
  activated_knowledge_skills: z.array(z.string()),
  /** Our extension: what StartConversationRequest set. */
  max_budget_per_task: z.number().nullable().default(null),
  stats: ConversationStatsSchema,
  /** All its LLMs' metrics together; null before the first call. */
  metrics: MetricsSnapshotSchema.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ConversationInfo = z.output<typeof ConversationInfoSchema>;

export const ConversationPageSchema = pageSchema(ConversationInfoSchema);
