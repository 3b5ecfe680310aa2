import { and, eq, lte, ne } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import type { Logger } from '../../logger.js';
import { type SandboxRow, type SandboxSpecRow, sandboxes } from '../db/schema.js';
import { agentWasBusy, type AskAgentIdleMs, askAgentIdleMs } from './agent-idle.js';

export interface PolicyDecision {
  sandboxId: string;
  desired: 'PAUSED' | 'DELETED';
  reason: 'idle' | 'ttl';
}

/**
 * The spec's lifetime rules for one sandbox at `now`: delete it `ttlSeconds` after creation, pause
 * it after `idlePauseSeconds` without activity. Only a RUNNING sandbox counts as idle; one still
 * starting has not had a chance to be used. An unclaimed warm-pool member is neither: waiting idle
 * is its job, and its life (its creation time included) starts when a start claims it.
 */
export function decidePolicy(row: SandboxRow, spec: SandboxSpecRow | undefined, now: Date): PolicyDecision | null {
  if (!spec || row.desiredState === 'DELETED' || row.poolFingerprint !== null) return null;
  if (spec.ttlSeconds !== null && now.getTime() - row.createdAt.getTime() >= spec.ttlSeconds * 1000) {
    return { sandboxId: row.id, desired: 'DELETED', reason: 'ttl' };
  }
  if (
    spec.idlePauseSeconds !== null &&
    row.desiredState === 'RUNNING' &&
    row.status === 'RUNNING' &&
    now.getTime() - row.lastActiveAt.getTime() >= spec.idlePauseSeconds * 1000
  ) {
    return { sandboxId: row.id, desired: 'PAUSED', reason: 'idle' };
  }
  return null;
}

/**
 * Writes the decisions as desired state. Each write re-checks its condition in the database, so a
 * request that touched or deleted the sandbox since the rows were read wins. A sandbox idle by its
 * traffic is paused only once its agent-server, asked through `askIdle`, does not report later work
 * of its own (agent-idle.ts). Returns the decisions that took effect.
 */
export async function applyPolicies(
  db: Database,
  entries: readonly { row: SandboxRow; spec: SandboxSpecRow | undefined }[],
  now: Date,
  askIdle: AskAgentIdleMs = askAgentIdleMs,
): Promise<PolicyDecision[]> {
  const decided = entries.flatMap(({ row, spec }) => {
    const decision = decidePolicy(row, spec, now);
    return decision && spec ? [{ row, spec, decision }] : [];
  });
  // Asked together: an agent-server that does not answer costs the pass one timeout, not one each.
  const busy = await Promise.all(
    decided.map(({ row, spec, decision }) => decision.reason === 'idle' && agentWasBusy(db, row, (spec.idlePauseSeconds ?? 0) * 1000, now, askIdle)),
  );
  const applied: PolicyDecision[] = [];
  for (const [index, { row, spec, decision }] of decided.entries()) {
    if (busy[index]) continue;
    const condition =
      decision.desired === 'DELETED'
        ? and(eq(sandboxes.id, row.id), ne(sandboxes.desiredState, 'DELETED'))
        : and(
            eq(sandboxes.id, row.id),
            eq(sandboxes.desiredState, 'RUNNING'),
            lte(sandboxes.lastActiveAt, new Date(now.getTime() - (spec.idlePauseSeconds ?? 0) * 1000)),
          );
    const updated = await db
      .update(sandboxes)
      .set({ desiredState: decision.desired, updatedAt: now })
      .where(condition)
      .returning({ id: sandboxes.id });
    if (updated.length > 0) applied.push(decision);
  }
  return applied;
}

/** Applies the policies to a pass's rows, and gives each row they changed its new desired state for the rest of the pass. */
export async function applyPoliciesToPass(
  db: Database,
  entries: { row: SandboxRow; spec: SandboxSpecRow | undefined }[],
  askIdle: AskAgentIdleMs,
  log: Logger,
): Promise<void> {
  const applied = await applyPolicies(db, entries, new Date(), askIdle);
  for (const decision of applied) {
    log.info(decision, 'policy changed desired state');
    const entry = entries.find((e) => e.row.id === decision.sandboxId);
    if (entry) entry.row = { ...entry.row, desiredState: decision.desired };
  }
}
