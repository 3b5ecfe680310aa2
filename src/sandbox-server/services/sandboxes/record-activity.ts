import { eq } from 'drizzle-orm';
import { sandboxes } from '../../db/schema.js';
import type { ServiceContext } from '../context.js';

/**
 * Marks sandboxes as used by traffic through the control plane, for idle auto-pause. Writes at
 * most once per `intervalMs` per sandbox, so a busy sandbox costs no write per request.
 */
export function createActivityRecorder(ctx: ServiceContext, intervalMs = 5_000) {
  const lastWrite = new Map<string, number>();
  return async function recordActivity(sandboxId: string): Promise<void> {
    const now = Date.now();
    if (now - (lastWrite.get(sandboxId) ?? 0) < intervalMs) return;
    lastWrite.set(sandboxId, now);
    await ctx.db.update(sandboxes).set({ lastActiveAt: new Date(now) }).where(eq(sandboxes.id, sandboxId));
  };
}
