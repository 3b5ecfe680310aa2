import { and, eq, isNull, ne } from 'drizzle-orm';
import { sandboxEventType } from '../../contracts/lifecycle-event.js';
import type { Database } from '../db/client.js';
import { sandboxes } from '../db/schema.js';
import { recordEvent } from '../lifecycle-events/record-event.js';
import { recordEngineHealth } from './record-engine-health.js';

/**
 * An engine whose address no connection can use (a row written before addresses were checked, or
 * by hand, such as a port of 99999) gets no runtime and no reconciler, so nothing else would ever
 * write its sandboxes: they would stay STARTING, and the engine could never be removed. This
 * writes what such a reconciler would find: the engine UNREACHABLE saying why, its live sandboxes
 * ERROR, and the deletions asked of it finished (no container can be there).
 */
export async function recordUnusableEngine(db: Database, engine: string, detail: string): Promise<void> {
  await recordEngineHealth(db, engine, false, detail);
  const stuck = await db
    .select()
    .from(sandboxes)
    .where(and(eq(sandboxes.engine, engine), isNull(sandboxes.deletedAt)));
  for (const row of stuck) {
    const deleted = row.desiredState === 'DELETED';
    if (!deleted && row.status === 'ERROR' && row.statusDetail === detail) continue;
    await db.transaction(async (tx) => {
      const [written] = await tx
        .update(sandboxes)
        .set(deleted ? { status: 'MISSING', statusDetail: null, deletedAt: new Date(), updatedAt: new Date() } : { status: 'ERROR', statusDetail: detail, updatedAt: new Date() })
        .where(and(eq(sandboxes.id, row.id), isNull(sandboxes.deletedAt), deleted ? eq(sandboxes.desiredState, 'DELETED') : ne(sandboxes.desiredState, 'DELETED')))
        .returning({ poolFingerprint: sandboxes.poolFingerprint });
      if (!written || written.poolFingerprint !== null || (!deleted && row.status === 'ERROR')) return;
      await recordEvent(tx, {
        type: deleted ? 'sandbox.deleted' : sandboxEventType('ERROR'),
        subjectKind: 'sandbox',
        subjectId: row.id,
        sandboxId: row.id,
        previousStatus: row.status,
        status: deleted ? 'DELETED' : 'ERROR',
        statusDetail: deleted ? null : detail,
      });
    });
  }
}
