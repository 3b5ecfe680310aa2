import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { validationError } from '../../../errors/index.js';
import { appConversations, appConversationStartTasks, type StartTaskRow } from '../../db/schema.js';
import { recordEvent } from '../../lifecycle-events/record-event.js';
import { startTaskEvent } from '../../lifecycle-events/start-task-event.js';
import type { AppConversationStartRequest } from '../../models/app-conversation.js';
import type { AppConversationContext } from './context.js';
import { checkBrokeredSecretsFit } from './broker-conversation-secrets.js';
import { chooseLlmModel, storedRequest } from './start-request.js';
import { repositorySource } from '../repositories/repository-source.js';

/**
 * Records a start task (WORKING) and returns it; the StartTaskRunner does the rest in the
 * background. Problems the request itself has (no model, a conversation id in use) are 4xx here,
 * before anything is written.
 */
export async function createStartTask(
  ctx: AppConversationContext,
  request: AppConversationStartRequest,
  createdByUserId: string | null,
): Promise<StartTaskRow> {
  chooseLlmModel(request, ctx.settings);
  // A repository that cannot be named (a bad URL, an unknown provider) is refused now.
  if (request.selected_repository) repositorySource({ ...request, selected_repository: request.selected_repository }, request.secrets);
  await checkBrokeredSecretsFit(ctx.db, request.sandbox_id ?? undefined, request.secrets);
  const conversationId = request.conversation_id ?? randomUUID();
  if (request.conversation_id) {
    const [existing] = await ctx.db.select({ id: appConversations.id }).from(appConversations).where(eq(appConversations.id, conversationId));
    if (existing) throw validationError('body', ['conversation_id'], 'An app conversation with this id already exists', 'value_error');
  }
  const now = new Date();
  return ctx.db.transaction(async (tx) => {
    const [task] = await tx
    .insert(appConversationStartTasks)
    .values({
      id: randomUUID(),
      createdByUserId,
      status: 'WORKING',
      conversationId,
      sandboxId: request.sandbox_id ?? null,
      request: storedRequest(request),
      secrets: request.secrets,
      llmApiKey: request.llm_api_key ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
    if (!task) throw new Error('insert returned no row');
    await recordEvent(tx, startTaskEvent(task, null));
    return task;
  });
}
