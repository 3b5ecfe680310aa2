import { eq } from 'drizzle-orm';
import type { EngineState } from '../../../contracts/engine.js';
import type { LifecycleEventType } from '../../../contracts/lifecycle-event.js';
import { ConflictError, NotFoundError } from '../../../errors/index.js';
import { engines } from '../../db/schema.js';
import { recordEvent } from '../../lifecycle-events/record-event.js';
import type { EngineInfo } from '../../models/engine.js';
import type { ServiceContext } from '../context.js';
import { announceEngines } from './announce-engines.js';
import { toEngineInfos } from './engine-view.js';

export interface EngineStateChange {
  to: EngineState;
  /** States it may be changed from; any other is a 409. */
  from: readonly EngineState[];
  event: LifecycleEventType;
}

/**
 * Sets an engine's schedulable state, with its event, in one transaction; asking for the state it
 * already has changes nothing and records nothing. A change asks for a warm-pool top-up: members
 * on an engine that takes no new sandboxes are retired and replaced elsewhere. Unknown engine: 404.
 */
export async function setEngineState(ctx: ServiceContext, name: string, change: EngineStateChange): Promise<EngineInfo> {
  let changed = false;
  const row = await ctx.db.transaction(async (tx) => {
    const [current] = await tx.select().from(engines).where(eq(engines.name, name)).for('update');
    if (!current) throw new NotFoundError('Engine not found');
    if (current.state === change.to) return current;
    changed = true;
    if (!change.from.includes(current.state)) throw new ConflictError(`Engine ${name} is ${current.state}`);
    const [updated] = await tx.update(engines).set({ state: change.to }).where(eq(engines.name, name)).returning();
    if (!updated) throw new NotFoundError('Engine not found');
    await announceEngines(tx);
    await recordEvent(tx, {
      type: change.event,
      subjectKind: 'engine',
      subjectId: name,
      sandboxId: null,
      previousStatus: current.state,
      status: updated.state,
      statusDetail: null,
    });
    return updated;
  });
  if (changed) ctx.reconciler.refillWarmPools?.();
  const [info] = await toEngineInfos(ctx.db, [row], ctx.runtimeProbes);
  return info as EngineInfo;
}
