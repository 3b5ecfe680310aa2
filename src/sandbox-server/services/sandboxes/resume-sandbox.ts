import { eq } from 'drizzle-orm';
import { sandboxes } from '../../db/schema.js';
import type { ServiceContext } from '../context.js';
import { findLiveSandbox } from './find-sandbox.js';
import { newSessionApiKey } from './new-ids.js';
import { lockRunningLimit, makeRoomForOneMore } from './running-limit.js';

/**
 * Wants the sandbox RUNNING again and marks it just used, pausing the least recently used others
 * if it would exceed MAX_RUNNING_SANDBOXES. Resuming a running sandbox succeeds; a deleted one is
 * a 409. An ERROR or MISSING sandbox is started afresh: a new restart generation, which the
 * reconciler acts on by replacing its container (its data volume stays), with a new session key,
 * so that whoever held the old one does not reach the new agent-server.
 */
export async function resumeSandbox(ctx: ServiceContext, id: string): Promise<void> {
  const paused = await ctx.db.transaction(async (tx) => {
    await lockRunningLimit(tx);
    const row = await findLiveSandbox(tx, id, { forUpdate: true });
    const paused = row.desiredState === 'RUNNING' ? [] : await makeRoomForOneMore(tx, ctx.maxRunningSandboxes, id);
    const now = new Date();
    const restart =
      row.status === 'ERROR' || row.status === 'MISSING'
        ? { restartGeneration: row.restartGeneration + 1, sessionApiKey: newSessionApiKey() }
        : {};
    await tx
      .update(sandboxes)
      .set({ desiredState: 'RUNNING', lastActiveAt: now, updatedAt: now, ...restart })
      .where(eq(sandboxes.id, id));
    return paused;
  });
  for (const pausedId of paused) ctx.reconciler.kick(pausedId);
  ctx.reconciler.kick(id);
}
