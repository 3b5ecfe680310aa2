import { eq } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { engines } from '../db/schema.js';
import { recordEvent } from '../lifecycle-events/record-event.js';

/**
 * Writes what an engine's reconciler found: HEALTHY (and when it was last seen) or UNREACHABLE
 * (and why). A change of health records `engine.healthy` or `engine.unreachable` in the same
 * transaction; an engine first seen healthy is no news and records none.
 */
export async function recordEngineHealth(db: Database, engine: string, healthy: boolean, detail: string | null): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx.select({ health: engines.health }).from(engines).where(eq(engines.name, engine)).for('update');
    if (!row) return;
    const health = healthy ? 'HEALTHY' : 'UNREACHABLE';
    await tx
      .update(engines)
      .set({ health, healthDetail: detail, ...(healthy ? { lastSeenAt: new Date() } : {}) })
      .where(eq(engines.name, engine));
    if (row.health === health || (row.health === null && healthy)) return;
    await recordEvent(tx, {
      type: healthy ? 'engine.healthy' : 'engine.unreachable',
      subjectKind: 'engine',
      subjectId: engine,
      sandboxId: null,
      previousStatus: row.health,
      status: health,
      statusDetail: detail,
    });
  });
}
