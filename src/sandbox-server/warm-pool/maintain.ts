import { and, asc, desc, eq, gt, inArray, isNotNull, isNull, ne, or } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { engines, sandboxes, sandboxSpecs } from '../db/schema.js';
import { UnavailableError } from '../../errors/index.js';
import type { Logger } from '../../logger.js';
import { insertSandbox } from '../services/sandboxes/insert-sandbox.js';
import { newSandboxId } from '../services/sandboxes/new-ids.js';
import { placeSandbox } from '../services/sandboxes/place-sandbox.js';
import { warmPoolFingerprint } from './fingerprint.js';
import { planWarmPools, type WarmPoolWant } from './plan.js';

export interface WarmPoolContext {
  db: Database;
  /** The id of the image a tag names now, on the engines (copies keep their id); null when absent; throws when the engines cannot tell. */
  imageId(image: string): Promise<string | null>;
  /** Unclaimed members across all pools, at most (MAX_WARM_SANDBOXES). */
  cap: number;
  log: Logger;
}

/**
 * Brings every spec's warm pool back to its size: records each pool's current fingerprint on its
 * spec (starts claim only members carrying it), wants stale, failed, displaced (on an engine cordoned
 * or draining) and surplus members DELETED, and adds
 * new member rows, each placed on an engine like any new sandbox (none fitting: the member waits
 * for a later top-up). Members are ordinary sandbox rows wanted RUNNING, so their engines'
 * reconcilers create, start and check them exactly as any sandbox. Returns the ids it changed or
 * added, for the caller to kick.
 */
export async function maintainWarmPools(ctx: WarmPoolContext): Promise<string[]> {
  const specs = await ctx.db
    .select()
    .from(sandboxSpecs)
    .where(and(isNull(sandboxSpecs.deletedAt), gt(sandboxSpecs.warmPoolSize, 0), or(isNull(sandboxSpecs.buildStatus), eq(sandboxSpecs.buildStatus, 'READY'))))
    .orderBy(desc(sandboxSpecs.isDefault), asc(sandboxSpecs.id));
  const wants: WarmPoolWant[] = [];
  /** Image -> its id now; undefined when no engine could say, and each pool keeps its fingerprint. */
  const images = new Map<string, string | null | undefined>();
  for (const spec of specs) {
    if (!images.has(spec.image)) images.set(spec.image, await imageIdOrUnknown(ctx, spec.image));
    const imageId = images.get(spec.image);
    const fingerprint = imageId === undefined && spec.warmPoolFingerprint !== null ? spec.warmPoolFingerprint : warmPoolFingerprint(spec, imageId ?? null);
    wants.push({ specId: spec.id, size: spec.warmPoolSize, fingerprint });
  }
  const fingerprintOf = new Map(wants.map((want) => [want.specId, want.fingerprint]));
  for (const spec of specs) {
    const fingerprint = fingerprintOf.get(spec.id) ?? null;
    if (spec.warmPoolFingerprint !== fingerprint) {
      await ctx.db.update(sandboxSpecs).set({ warmPoolFingerprint: fingerprint }).where(eq(sandboxSpecs.id, spec.id));
    }
  }

  const members = await ctx.db
    .select({ id: sandboxes.id, specId: sandboxes.specId, fingerprint: sandboxes.poolFingerprint, status: sandboxes.status, engineState: engines.state })
    .from(sandboxes)
    .innerJoin(engines, eq(engines.name, sandboxes.engine))
    .where(and(isNotNull(sandboxes.poolFingerprint), ne(sandboxes.desiredState, 'DELETED')));
  const plan = planWarmPools(
    wants,
    members.map(({ engineState, ...member }) => ({ ...member, fingerprint: member.fingerprint ?? '', displaced: engineState !== 'ACTIVE' })),
    ctx.cap,
  );

  const changed: string[] = [];
  if (plan.retire.length > 0) {
    // Re-checked in the update: a member claimed since it was read is a user's sandbox now. The
    // claim locks the member it takes and clears its fingerprint in one statement, so a member is
    // either claimed or retired, never both.
    const retired = await ctx.db
      .update(sandboxes)
      .set({ desiredState: 'DELETED', updatedAt: new Date() })
      .where(and(inArray(sandboxes.id, plan.retire), isNotNull(sandboxes.poolFingerprint)))
      .returning({ id: sandboxes.id });
    changed.push(...retired.map((row) => row.id));
  }
  const labelsOf = new Map(specs.map((spec) => [spec.id, spec.engineLabels]));
  const unplaced = new Map<string, string>();
  for (const specId of plan.add) {
    if (unplaced.has(specId)) continue;
    try {
      changed.push(await addMember(ctx.db, specId, fingerprintOf.get(specId) ?? '', labelsOf.get(specId) ?? {}));
    } catch (error) {
      if (!(error instanceof UnavailableError)) throw error;
      unplaced.set(specId, error.message);
    }
  }
  for (const [specId, why] of unplaced) ctx.log.warn({ specId, why }, 'warm-pool members wait for an engine that can take them');
  return changed;
}

async function addMember(db: Database, specId: string, fingerprint: string, constraints: Record<string, string>): Promise<string> {
  const row = await db.transaction(async (tx) => {
    const engine = await placeSandbox(tx, constraints);
    return insertSandbox(tx, { id: newSandboxId(), specId, engine, poolFingerprint: fingerprint }, 'warm-pool member');
  });
  return row.id;
}

/** The image's id, or undefined when the engines could not be asked (logged). */
async function imageIdOrUnknown(ctx: WarmPoolContext, image: string): Promise<string | null | undefined> {
  try {
    return await ctx.imageId(image);
  } catch (error) {
    ctx.log.warn({ image, err: error }, 'could not look up a warm pool image; its pool keeps its fingerprint');
    return undefined;
  }
}
