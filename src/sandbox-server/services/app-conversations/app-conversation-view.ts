import { inArray } from 'drizzle-orm';
import type { AppConversationRow, StartTaskRow } from '../../db/schema.js';
import { sandboxes } from '../../db/schema.js';
import { agentTargetOf } from '../../agent-client.js';
import type { AppConversationContext } from './context.js';
import type { AppConversation, AppConversationStartTask } from '../../models/app-conversation.js';
import type { ConversationInfo } from '../../../contracts/agent-server/conversation-info.js';

/** A hung agent-server costs a listing this long at most; its conversations then show nulls. */
const LIVE_STATUS_TIMEOUT_MS = 2_000;

/**
 * The wire view of app conversations. Sandbox status comes from our database; execution status,
 * LLM metrics (cost and tokens), URL and key only while the sandbox runs, read live from its
 * agent-server with one batch call per sandbox. An agent-server that does not answer gives nulls, never an error.
 */
export async function toAppConversations(ctx: AppConversationContext, rows: AppConversationRow[]): Promise<AppConversation[]> {
  if (rows.length === 0) return [];
  const sandboxIds = [...new Set(rows.map((row) => row.sandboxId))];
  const sandboxRows = await ctx.db.select().from(sandboxes).where(inArray(sandboxes.id, sandboxIds));
  const sandboxById = new Map(sandboxRows.map((row) => [row.id, row]));
  const live = new Map<string, Pick<ConversationInfo, 'execution_status' | 'metrics'>>();
  await Promise.all(
    sandboxRows.map(async (sandbox) => {
      const target = agentTargetOf(sandbox);
      if (!target) return;
      const ids = rows.filter((row) => row.sandboxId === sandbox.id).map((row) => row.id);
      const infos = await ctx
        .agentClient(target, { timeoutMs: LIVE_STATUS_TIMEOUT_MS })
        .getConversations(ids)
        .catch(() => []);
      infos.forEach((info, i) => {
        const id = ids[i];
        if (id && info) live.set(id, info);
      });
    }),
  );
  return rows.map((row) => {
    const sandbox = sandboxById.get(row.sandboxId);
    const running = sandbox?.desiredState !== 'DELETED' ? sandbox : undefined;
    const target = running ? agentTargetOf(running) : null;
    const info = target !== null ? live.get(row.id) : undefined;
    const reachable = info !== undefined;
    return {
      id: row.id,
      created_by_user_id: row.createdByUserId,
      sandbox_id: row.sandboxId,
      selected_repository: row.selectedRepository,
      selected_branch: row.selectedBranch,
      git_provider: row.gitProvider,
      title: row.title,
      trigger: row.trigger,
      pr_number: row.prNumber,
      llm_model: row.llmModel,
      tags: row.tags,
      metrics: info?.metrics ?? null,
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
      sandbox_status: running ? running.status : 'MISSING',
      execution_status: info?.execution_status ?? null,
      conversation_url: reachable && target ? `${target.baseUrl}/api/conversations/${row.id}` : null,
      session_api_key: reachable && target ? target.sessionApiKey : null,
      sub_conversation_ids: [],
    };
  });
}

export function toStartTask(row: StartTaskRow): AppConversationStartTask {
  return {
    id: row.id,
    created_by_user_id: row.createdByUserId,
    status: row.status,
    detail: row.detail,
    app_conversation_id: row.status === 'READY' ? row.conversationId : null,
    sandbox_id: row.sandboxId,
    agent_server_url: row.agentServerUrl,
    log: row.log,
    request: row.request,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
