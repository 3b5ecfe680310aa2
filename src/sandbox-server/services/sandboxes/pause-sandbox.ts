import { and, eq } from 'drizzle-orm';
import { sandboxes } from '../../db/schema.js';
import type { ServiceContext } from '../context.js';
import { findLiveSandbox, notInWarmPool } from './find-sandbox.js';

/** Wants the sandbox PAUSED. Pausing a paused sandbox succeeds; a deleted one is a 409. */
export async function pauseSandbox(ctx: ServiceContext, id: string): Promise<void> {
  const updated = await ctx.db
    .update(sandboxes)
    .set({ desiredState: 'PAUSED', updatedAt: new Date() })
    .where(and(eq(sandboxes.id, id), eq(sandboxes.desiredState, 'RUNNING'), notInWarmPool))
    .returning({ id: sandboxes.id });
  if (updated.length === 0) await findLiveSandbox(ctx.db, id);
  ctx.reconciler.kick(id);
}
