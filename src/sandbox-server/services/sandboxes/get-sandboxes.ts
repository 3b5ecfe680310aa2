import { and, inArray, ne } from 'drizzle-orm';
import { BadRequestError } from '../../../errors/index.js';
import { sandboxes } from '../../db/schema.js';
import { MAX_BATCH_IDS } from '../../models/common.js';
import type { SandboxInfo } from '../../models/sandbox.js';
import type { ServiceContext } from '../context.js';
import { engineAwayDetails } from './engine-away.js';
import { notInWarmPool } from './find-sandbox.js';
import { toSandboxInfo } from './sandbox-info.js';

/** One entry per requested id, in order: the sandbox, or null when unknown or deleted. */
export async function getSandboxes(ctx: ServiceContext, ids: readonly string[]): Promise<(SandboxInfo | null)[]> {
  if (ids.length > MAX_BATCH_IDS) throw new BadRequestError(`Too many ids: at most ${MAX_BATCH_IDS} per request`);
  const rows = await ctx.db
    .select()
    .from(sandboxes)
    .where(and(inArray(sandboxes.id, [...new Set(ids)]), ne(sandboxes.desiredState, 'DELETED'), notInWarmPool));
  const away = await engineAwayDetails(ctx.db);
  const byId = new Map(rows.map((row) => [row.id, toSandboxInfo(row, away.get(row.engine))]));
  return ids.map((id) => byId.get(id) ?? null);
}
