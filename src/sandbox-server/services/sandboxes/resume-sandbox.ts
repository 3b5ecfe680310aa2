import { eq } from 'drizzle-orm';
import { sandboxes } from '../../db/schema.js';
import type { ServiceContext } from '../context.js';
import { findLiveSandbox } from './find-sandbox.js';
import { lockRunningLimit, makeRoomForOneMore } from './running-limit.js';

/**
 * Wants the sandbox RUNNING again and marks it just used, pausing the least recently used others
 * if it would exceed MAX_RUNNING_SANDBOXES. Resuming a running sandbox succeeds; a deleted one is
 * a 409.
 */
export async function resumeSandbox(ctx: ServiceContext, id: string): Promise<void> {
  const paused = await ctx.db.transaction(async (tx) => {
    await lockRunningLimit(tx);
    const row = await findLiveSandbox(tx, id, { forUpdate: true });
    const paused = row.desiredState === 'RUNNING' ? [] : await makeRoomForOneMore(tx, ctx.maxRunningSandboxes, id);
    const now = new Date();
    await tx.update(sandboxes).set({ desiredState: 'RUNNING', lastActiveAt: now, updatedAt: now }).where(eq(sandboxes.id, id));
    return paused;
  });
  for (const pausedId of paused) ctx.reconciler.kick(pausedId);
  ctx.reconciler.kick(id);
}
