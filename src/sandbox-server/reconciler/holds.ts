import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, eq, gt, inArray, isNotNull, sql } from 'drizzle-orm';
import { UnavailableError } from '../../errors/index.js';
import type { Database } from '../db/client.js';
import { sandboxes, sandboxHolds } from '../db/schema.js';

export interface HoldOptions {
  db: Database;
  /** Asks the replica that reconciles for a pass over the sandbox: the pass that acknowledges the hold. */
  kick(sandboxId: string): void;
  /** A hold not renewed for this long lapses (its holder died). Default 30 s, renewed every third. */
  ttlMs?: number;
  /** How long to wait for a pass to acknowledge the hold. Default 30 s. */
  acknowledgeTimeoutMs?: number;
  /** How long to wait for another holder of the sandbox to let go. Default 5 min. */
  takeTimeoutMs?: number;
}

const POLL_MS = 25;

/**
 * Runs `work` while no reconciler pass acts on the sandbox, in whichever replica it runs: takes the
 * sandbox's hold in the database (holders of one sandbox take turns), waits until a pass has
 * acknowledged it (so the pass under way when it was taken has ended), keeps it renewed while
 * `work` runs, then releases it and asks for a pass. No pass acknowledging in time (no replica
 * reconciles): 503, and `work` does not run.
 */
export async function holdSandbox<T>(options: HoldOptions, sandboxId: string, work: () => Promise<T>): Promise<T> {
  const { db } = options;
  const ttlMs = options.ttlMs ?? 30_000;
  const holder = randomUUID();
  await waitFor(() => takeHold(db, sandboxId, holder, ttlMs), options.takeTimeoutMs ?? 300_000, 'another snapshot of this sandbox did not end');
  const renewal = setInterval(() => void renewHold(db, sandboxId, holder, ttlMs).catch(() => undefined), ttlMs / 3).unref();
  try {
    options.kick(sandboxId);
    await waitFor(() => holdAcknowledged(db, sandboxId, holder), options.acknowledgeTimeoutMs ?? 30_000, 'no reconciler let go of the sandbox');
    return await work();
  } finally {
    clearInterval(renewal);
    await releaseHold(db, sandboxId, holder).catch(() => undefined);
    options.kick(sandboxId);
  }
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, failure: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() >= deadline) throw new UnavailableError(`The sandbox could not be held: ${failure} within ${Math.round(timeoutMs / 1000)} s`);
    await sleep(POLL_MS);
  }
}

const fromNow = (ms: number) => sql`now() + ${ms} * interval '1 millisecond'`;

/** One statement: the hold is taken when it is free or lapsed, so two holders never both get it. */
async function takeHold(db: Database, sandboxId: string, holder: string, ttlMs: number): Promise<boolean> {
  const values = { holder, expiresAt: fromNow(ttlMs), acknowledgedAt: null };
  const taken = await db
    .insert(sandboxHolds)
    .values({ sandboxId, ...values })
    .onConflictDoUpdate({ target: sandboxHolds.sandboxId, set: values, setWhere: sql`${sandboxHolds.expiresAt} < now()` })
    .returning({ holder: sandboxHolds.holder });
  return taken.length === 1;
}

async function renewHold(db: Database, sandboxId: string, holder: string, ttlMs: number): Promise<void> {
  await db
    .update(sandboxHolds)
    .set({ expiresAt: fromNow(ttlMs) })
    .where(and(eq(sandboxHolds.sandboxId, sandboxId), eq(sandboxHolds.holder, holder)));
}

async function releaseHold(db: Database, sandboxId: string, holder: string): Promise<void> {
  await db.delete(sandboxHolds).where(and(eq(sandboxHolds.sandboxId, sandboxId), eq(sandboxHolds.holder, holder)));
}

async function holdAcknowledged(db: Database, sandboxId: string, holder: string): Promise<boolean> {
  const rows = await db
    .select({ sandboxId: sandboxHolds.sandboxId })
    .from(sandboxHolds)
    .where(and(eq(sandboxHolds.sandboxId, sandboxId), eq(sandboxHolds.holder, holder), isNotNull(sandboxHolds.acknowledgedAt)));
  return rows.length === 1;
}

/**
 * The reconciler's side, at the start of each pass: the sandboxes of its engine held now (among
 * `only`, or all of them), whose holds it acknowledges. The pass, and every later one, leaves them
 * alone. Only the reconciler of the sandbox's engine may acknowledge: another engine's passes do not
 * touch it, and must not let the holder start while its own reconciler's pass is under way.
 */
export async function acknowledgeHolds(db: Database, engine: string, only?: ReadonlySet<string>): Promise<Set<string>> {
  if (only?.size === 0) return new Set();
  const onEngine = db.select({ id: sandboxes.id }).from(sandboxes).where(eq(sandboxes.engine, engine));
  const held = await db
    .update(sandboxHolds)
    .set({ acknowledgedAt: sql`coalesce(${sandboxHolds.acknowledgedAt}, now())` })
    .where(
      and(
        gt(sandboxHolds.expiresAt, sql`now()`),
        inArray(sandboxHolds.sandboxId, onEngine),
        only ? inArray(sandboxHolds.sandboxId, [...only]) : undefined,
      ),
    )
    .returning({ sandboxId: sandboxHolds.sandboxId });
  return new Set(held.map((row) => row.sandboxId));
}
