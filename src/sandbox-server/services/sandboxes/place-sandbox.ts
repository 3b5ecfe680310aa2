import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import { UnavailableError } from '../../../errors/index.js';
import { chooseEngine } from './placement.js';
import { engines, sandboxes } from '../../db/schema.js';
import type { Transaction } from '../../db/client.js';

/** A placement refused: new engines or free room may come soon. */
const PLACEMENT_RETRY_AFTER_SECONDS = 5;

/**
 * Chooses the engine of a new sandbox (see chooseEngine), inside the transaction that inserts it.
 * The engine rows are locked (FOR UPDATE) until that transaction ends, so placements by any number
 * of control planes are counted one after another and never overfill an engine. `only` restricts
 * the choice (a sandbox from a snapshot runs on the snapshot's engine). No engine fits: 503.
 */
export async function placeSandbox(tx: Transaction, constraints: Record<string, string>, only?: string): Promise<string> {
  const rows = await tx
    .select()
    .from(engines)
    .where(only === undefined ? undefined : eq(engines.name, only))
    .orderBy(engines.name)
    .for('update');
  const names = rows.map((row) => row.name);
  const counts =
    names.length === 0
      ? []
      : await tx
          .select({ engine: sandboxes.engine, live: sql<number>`count(*)::int` })
          .from(sandboxes)
          .where(and(inArray(sandboxes.engine, names), isNull(sandboxes.deletedAt)))
          .groupBy(sandboxes.engine);
  const live = new Map(counts.map((count) => [count.engine, Number(count.live)]));
  const placement = chooseEngine(
    rows.map((row) => ({ ...row, live: live.get(row.name) ?? 0 })),
    constraints,
  );
  if (placement.engine === null) {
    const why = only === undefined ? placement.why : `the snapshot's engine cannot take it: ${placement.why}`;
    throw new UnavailableError(why, PLACEMENT_RETRY_AFTER_SECONDS);
  }
  return placement.engine;
}
