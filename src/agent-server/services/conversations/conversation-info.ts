import type { ConversationInfo } from '../../../contracts/agent-server/conversation-info.js';
import { combinedMetrics } from '../../agent/llm/usage-metrics.js';
import { maskSecrets } from './mask-secrets.js';
import type { ConversationMetadata } from '../../conversations/metadata.js';

export function toConversationInfo(metadata: ConversationMetadata): ConversationInfo {
  return {
    id: metadata.id,
    agent: maskSecrets(metadata.agent),
    workspace: metadata.workspace,
    execution_status: metadata.execution_status,
    confirmation_policy: metadata.confirmation_policy,
    max_iterations: metadata.max_iterations,
    stuck_detection: metadata.stuck_detection,
    title: metadata.title,
    tags: metadata.tags,
    activated_knowledge_skills: metadata.activated_knowledge_skills,
    max_budget_per_task: metadata.max_budget_per_task,
    stats: metadata.stats,
    metrics: combinedMetrics(metadata.stats),
    created_at: metadata.created_at,
    updated_at: metadata.updated_at,
  };
}
