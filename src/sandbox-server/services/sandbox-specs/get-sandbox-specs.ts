import { and, inArray, isNull } from 'drizzle-orm';
import { BadRequestError } from '../../../errors/index.js';
import { sandboxSpecs } from '../../db/schema.js';
import { MAX_BATCH_IDS } from '../../models/common.js';
import type { SandboxSpecInfo } from '../../models/sandbox-spec.js';
import type { ServiceContext } from '../context.js';
import { toSandboxSpecInfos } from './sandbox-spec-info.js';

/** One entry per requested id, in order: the spec, or null when unknown or deleted. */
export async function getSandboxSpecs(ctx: ServiceContext, ids: readonly string[]): Promise<(SandboxSpecInfo | null)[]> {
  if (ids.length > MAX_BATCH_IDS) throw new BadRequestError(`Too many ids: at most ${MAX_BATCH_IDS} per request`);
  const rows = await ctx.db
    .select()
    .from(sandboxSpecs)
    .where(and(inArray(sandboxSpecs.id, [...new Set(ids)]), isNull(sandboxSpecs.deletedAt)));
  const byId = new Map((await toSandboxSpecInfos(ctx.db, rows)).map((info) => [info.id, info]));
  return ids.map((id) => byId.get(id) ?? null);
}
