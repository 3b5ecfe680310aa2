import { and, eq, lt } from 'drizzle-orm';
import { type AgentServerTarget, agentTargetOf, createAgentClient } from '../agent-client.js';
import type { Database } from '../db/client.js';
import { type SandboxRow, sandboxes } from '../db/schema.js';

const ASK_TIMEOUT_MS = 1_000;

/** How long an agent-server has done no conversation work, in ms (0 while an agent runs); null when it cannot say. */
export type AskAgentIdleMs = (target: AgentServerTarget) => Promise<number | null>;

/** Its /server_info `idle_time`; an agent-server that fails to answer, or answers oddly, cannot say. */
export const askAgentIdleMs: AskAgentIdleMs = async (target) => {
  try {
    const { idle_time: idleSeconds } = await createAgentClient(target, { timeoutMs: ASK_TIMEOUT_MS }).serverInfo();
    return idleSeconds >= 0 ? idleSeconds * 1000 : null;
  } catch {
    return null;
  }
};

/**
 * Whether the agent of a sandbox that no traffic touched for `idleMs` worked more recently: an agent
 * busy with a long task and no client attached is in use, whatever the proxy saw. If so, its last
 * work becomes the sandbox's last activity, so every judge of idleness (auto-pause, drain) sees it.
 * An agent-server that cannot say leaves the judgement to the traffic.
 */
export async function agentWasBusy(db: Database, row: SandboxRow, idleMs: number, now: Date, ask: AskAgentIdleMs): Promise<boolean> {
  const target = agentTargetOf(row);
  const agentIdleMs = target && (await ask(target));
  if (agentIdleMs === null || agentIdleMs >= idleMs) return false;
  const lastWork = new Date(now.getTime() - agentIdleMs);
  await db
    .update(sandboxes)
    .set({ lastActiveAt: lastWork })
    .where(and(eq(sandboxes.id, row.id), lt(sandboxes.lastActiveAt, lastWork)));
  return true;
}
