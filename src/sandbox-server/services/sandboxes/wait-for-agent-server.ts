import { setTimeout as delay } from 'node:timers/promises';
import { eq } from 'drizzle-orm';
import { ConflictError, UnavailableError } from '../../../errors/index.js';
import { type AgentServerTarget, agentTargetOf, checkAgentServerAlive, startingAgentTargetOf } from '../../agent-client.js';
import { type SandboxRow, sandboxes, sandboxSpecs } from '../../db/schema.js';
import type { ServiceContext } from '../context.js';
import { findLiveSandbox } from './find-sandbox.js';
import { resumeSandbox } from './resume-sandbox.js';

/** Between reads when no lifecycle event wakes the wait first (one from another writer may be missed). */
const POLL_MS = 200;
/**
 * A starting sandbox's agent-server is asked /alive this often by one wait, and, when many waits
 * ask at once in this process, by all of them together about once per this: 200 asks a second.
 */
const ASK_SPACING_MS = 5;
/** Waits asking an agent-server right now, in this process. */
let asking = 0;

export interface WaitForAgentServerOptions {
  /** What to do with a paused sandbox: resume it always, only when its spec says so, or never (409). */
  resume: 'always' | 'if-spec-allows' | 'never';
  timeoutMs: number;
  pollMs?: number;
  signal?: AbortSignal;
}

/**
 * Waits until the sandbox's agent-server answers, resuming a paused sandbox when allowed. That is
 * status RUNNING, or sooner: a STARTING sandbox whose container is up is asked /alive closely here,
 * as the reconciler's probe asks it, and its first answer ends the wait without waiting for the
 * reconciler to see it and write RUNNING. A sandbox that is deleted, failed or gone is a 409
 * naming its state, never a hang; one that does not come up in time is a 503.
 */
export async function waitForAgentServer(
  ctx: ServiceContext,
  sandboxId: string,
  options: WaitForAgentServerOptions,
): Promise<AgentServerTarget> {
  // Taken before each read, so that a change committed between the read and the wait still wakes
  // it; `round` ends with the wait that follows the read, and drops what it listened to.
  let round = new AbortController();
  let changed = ctx.nextSandboxChange?.(sandboxId, round.signal);
  try {
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
      const starting = startingAgentTargetOf(row);
      const answered = await changeOrDelay(changed, options.pollMs ?? POLL_MS, options.signal, starting);
      if (starting && answered) return starting;
      round.abort();
      round = new AbortController();
      changed = ctx.nextSandboxChange?.(sandboxId, round.signal);
      const [next] = await ctx.db.select().from(sandboxes).where(eq(sandboxes.id, sandboxId));
      if (!next) throw new ConflictError(`Sandbox ${sandboxId} has been deleted`);
      row = next;
    }
  } finally {
    round.abort();
  }
}

/**
 * Waits for `changed` (when there is one) or `ms`, whichever comes first, meanwhile asking
 * `starting`'s agent-server until it answers; true when it answered. Throws once `signal` aborts.
 */
async function changeOrDelay(
  changed: Promise<void> | undefined,
  ms: number,
  signal: AbortSignal | undefined,
  starting: AgentServerTarget | null,
): Promise<boolean> {
  const woken = new AbortController();
  const waited = delay(ms, false, { signal: woken.signal }).catch(() => false);
  const onAbort = () => woken.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const wakes = [waited, ...(changed ? [changed.then(() => false)] : []), ...(starting ? [answered(starting, woken.signal)] : [])];
  const answer = await Promise.race(wakes);
  woken.abort();
  signal?.removeEventListener('abort', onAbort);
  signal?.throwIfAborted();
  return answer;
}

/** Asks the agent-server /alive until it answers (true) or `stop` aborts (false). */
async function answered(target: AgentServerTarget, stop: AbortSignal): Promise<boolean> {
  asking++;
  try {
    while (!stop.aborted) {
      if (await checkAgentServerAlive(target.baseUrl, target.sessionApiKey)) return !stop.aborted;
      const woke = await delay(asking * ASK_SPACING_MS, true, { signal: stop, ref: false }).catch(() => false);
      if (!woke) return false;
    }
    return false;
  } finally {
    asking--;
  }
}

async function mayResume(ctx: ServiceContext, row: SandboxRow, policy: WaitForAgentServerOptions['resume']): Promise<boolean> {
  if (policy !== 'if-spec-allows') return policy === 'always';
  const [spec] = await ctx.db.select({ resumeOnAccess: sandboxSpecs.resumeOnAccess }).from(sandboxSpecs).where(eq(sandboxSpecs.id, row.specId));
  return spec?.resumeOnAccess ?? false;
}
