import { eq } from 'drizzle-orm';
import { sandboxes } from '../../db/schema.js';
import { logger } from '../../../logger.js';
import type { ServiceContext } from '../context.js';

/**
 * Marks sandboxes as used by traffic through the control plane, for idle auto-pause. Writes at
 * most once per `intervalMs` per sandbox, in the background: a request never waits on the database.
 */
export function createActivityRecorder(ctx: ServiceContext, intervalMs = 1_000) {
  const lastWrite = new Map<string, number>();
  return function recordActivity(sandboxId: string): void {
    const now = Date.now();
    if (now - (lastWrite.get(sandboxId) ?? 0) < intervalMs) return;
    lastWrite.set(sandboxId, now);
    ctx.db
      .update(sandboxes)
      .set({ lastActiveAt: new Date(now) })
      .where(eq(sandboxes.id, sandboxId))
      .catch((error: unknown) => logger.warn({ err: error, sandboxId }, 'recording proxy activity failed'));
  };
}
