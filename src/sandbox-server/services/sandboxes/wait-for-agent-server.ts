import { setTimeout as delay } from 'node:timers/promises';
import { eq } from 'drizzle-orm';
import { ConflictError, UnavailableError } from '../../../errors/index.js';
import { type SandboxRow, sandboxes, sandboxSpecs } from '../../db/schema.js';
import type { AgentServerTarget } from '../../proxy/forward-http.js';
import type { ServiceContext } from '../context.js';
import { agentTargetOf } from './agent-target.js';
import { findLiveSandbox } from './find-sandbox.js';
import { resumeSandbox } from './resume-sandbox.js';

/** Between reads when no lifecycle event wakes the wait first (one from another writer may be missed). */
const POLL_MS = 200;

export interface WaitForAgentServerOptions {
  /** What to do with a paused sandbox: resume it always, only when its spec says so, or never (409). */
  resume: 'always' | 'if-spec-allows' | 'never';
  timeoutMs: number;
  pollMs?: number;
  signal?: AbortSignal;
}

/**
 * Waits until the sandbox's agent-server answers (status RUNNING), resuming a paused sandbox when
 * allowed. A sandbox that is deleted, failed or gone is a 409 naming its state, never a hang; one
 * that does not come up in time is a 503.
 */
export async function waitForAgentServer(
  ctx: ServiceContext,
  sandboxId: string,
  options: WaitForAgentServerOptions,
): Promise<AgentServerTarget> {
  // Taken before each read, so that a change committed between the read and the wait still wakes it.
  let changed = ctx.nextSandboxChange?.();
  let row = await findLiveSandbox(ctx.db, sandboxId);
  // Wanted RUNNING while still PAUSED, it is already coming up (resumed, or being moved by a drain): wait for it.
  if (row.desiredState === 'PAUSED') {
    if (!(await mayResume(ctx, row, options.resume))) {
      throw new ConflictError(`Sandbox ${sandboxId} is paused; resume it first (POST /api/v1/sandboxes/${sandboxId}/resume)`);
    }
    await resumeSandbox(ctx, sandboxId);
  }
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    options.signal?.throwIfAborted();
    const target = agentTargetOf(row);
    if (target && row.desiredState === 'RUNNING') return target;
    if (row.desiredState === 'DELETED') throw new ConflictError(`Sandbox ${sandboxId} has been deleted`);
    if (row.status === 'ERROR' || row.status === 'MISSING') {
      throw new ConflictError(`Sandbox ${sandboxId} is ${row.status}${row.statusDetail ? `: ${row.statusDetail}` : ''}`);
    }
    if (Date.now() >= deadline) {
      throw new UnavailableError(
        `Sandbox ${sandboxId} did not become RUNNING within ${Math.round(options.timeoutMs / 1000)} s (status ${row.status})`,
      );
    }
    await changeOrDelay(changed, options.pollMs ?? POLL_MS, options.signal);
    changed = ctx.nextSandboxChange?.();
    const [next] = await ctx.db.select().from(sandboxes).where(eq(sandboxes.id, sandboxId));
    if (!next) throw new ConflictError(`Sandbox ${sandboxId} has been deleted`);
    row = next;
  }
}

/** Waits for `changed` (when there is one) or `ms`, whichever comes first; throws once `signal` aborts. */
async function changeOrDelay(changed: Promise<void> | undefined, ms: number, signal: AbortSignal | undefined): Promise<void> {
  const woken = new AbortController();
  const waited = delay(ms, undefined, { signal: woken.signal }).catch(() => undefined);
  const onAbort = () => woken.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  await Promise.race(changed ? [waited, changed] : [waited]);
  woken.abort();
  signal?.removeEventListener('abort', onAbort);
  signal?.throwIfAborted();
}

async function mayResume(ctx: ServiceContext, row: SandboxRow, policy: WaitForAgentServerOptions['resume']): Promise<boolean> {
  if (policy !== 'if-spec-allows') return policy === 'always';
  const [spec] = await ctx.db.select({ resumeOnAccess: sandboxSpecs.resumeOnAccess }).from(sandboxSpecs).where(eq(sandboxSpecs.id, row.specId));
  return spec?.resumeOnAccess ?? false;
}
