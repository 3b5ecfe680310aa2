import { and, asc, gte, isNull } from 'drizzle-orm';
import type { Page } from '../../../contracts/paging.js';
import { sandboxSpecs } from '../../db/schema.js';
import type { SandboxSpecInfo } from '../../models/sandbox-spec.js';
import type { ServiceContext } from '../context.js';
import { toSandboxSpecInfos } from './sandbox-spec-info.js';

export interface SearchSandboxSpecsInput {
  pageId?: string;
  limit: number;
}

/**
 * Specs not deleted, by id. `next_page_id` is the id of the first spec of the next page; the next
 * query takes ids from there on, so it stays valid even if that spec is deleted meanwhile.
 */
export async function searchSandboxSpecs(ctx: ServiceContext, input: SearchSandboxSpecsInput): Promise<Page<SandboxSpecInfo>> {
  const live = isNull(sandboxSpecs.deletedAt);
  const rows = await ctx.db
    .select()
    .from(sandboxSpecs)
    .where(input.pageId === undefined ? live : and(live, gte(sandboxSpecs.id, input.pageId)))
    .orderBy(asc(sandboxSpecs.id))
    .limit(input.limit + 1);
  const next = rows.length > input.limit ? rows[input.limit] : undefined;
  return { items: await toSandboxSpecInfos(ctx.db, rows.slice(0, input.limit)), next_page_id: next?.id ?? null };
}
