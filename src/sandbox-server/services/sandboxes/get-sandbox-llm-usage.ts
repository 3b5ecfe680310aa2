import { and, asc, eq } from 'drizzle-orm';
import { NotFoundError } from '../../../errors/index.js';
import { llmRelayRoutes, sandboxes } from '../../db/schema.js';
import type { SandboxLlmUsage } from '../../models/llm-usage.js';
import type { ServiceContext } from '../context.js';
import { notInWarmPool } from './find-sandbox.js';

/**
 * What the LLM relay counted for a sandbox's conversations, oldest first, and their sum. A deleted
 * sandbox still answers until its row is gone: usage outlives the work.
 */
export async function getSandboxLlmUsage(ctx: ServiceContext, id: string): Promise<SandboxLlmUsage> {
  const [sandbox] = await ctx.db.select({ id: sandboxes.id }).from(sandboxes).where(and(eq(sandboxes.id, id), notInWarmPool));
  if (!sandbox) throw new NotFoundError('Sandbox not found');
  const routes = await ctx.db
    .select({ conversation_id: llmRelayRoutes.conversationId, calls: llmRelayRoutes.calls, input_tokens: llmRelayRoutes.inputTokens, output_tokens: llmRelayRoutes.outputTokens })
    .from(llmRelayRoutes)
    .where(eq(llmRelayRoutes.sandboxId, id))
    .orderBy(asc(llmRelayRoutes.createdAt), asc(llmRelayRoutes.conversationId));
  const sum = (field: 'calls' | 'input_tokens' | 'output_tokens') => routes.reduce((total, route) => total + route[field], 0);
  return { sandbox_id: id, calls: sum('calls'), input_tokens: sum('input_tokens'), output_tokens: sum('output_tokens'), conversations: routes };
}
