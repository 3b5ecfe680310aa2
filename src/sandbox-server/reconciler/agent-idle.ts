import { and, eq, lt } from 'drizzle-orm';
import { z } from 'zod';
import type { Database } from '../db/client.js';
import { type SandboxRow, sandboxes } from '../db/schema.js';
import type { AgentServerTarget } from '../proxy/forward-http.js';
import { agentTargetOf } from '../services/sandboxes/agent-target.js';

const ASK_TIMEOUT_MS = 1_000;

const ServerIdleSchema = z.object({ idle_time: z.number().nonnegative() });

/** How long an agent-server has done no conversation work, in ms (0 while an agent runs); null when it cannot say. */
export type AskAgentIdleMs = (target: AgentServerTarget) => Promise<number | null>;

/** GET <agent-server>/server_info and read its `idle_time`; any failure is "cannot say". */
export const askAgentIdleMs: AskAgentIdleMs = async (target) => {
  try {
    const response = await fetch(`${target.baseUrl}/server_info`, {
      headers: { 'X-Session-API-Key': target.sessionApiKey },
      signal: AbortSignal.timeout(ASK_TIMEOUT_MS),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return null;
    }
    const info = ServerIdleSchema.safeParse(await response.json());
    return info.success ? info.data.idle_time * 1000 : null;
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
