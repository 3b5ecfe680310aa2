import { and, asc, eq, gte, type SQL } from 'drizzle-orm';
import type { Page } from '../../../contracts/paging.js';
import { validationError } from '../../../errors/index.js';
import { engines } from '../../db/schema.js';
import type { EngineInfo } from '../../models/engine.js';
import type { ServiceContext } from '../context.js';
import { toEngineInfos } from './engine-view.js';

export interface SearchEnginesInput {
  pageId?: string;
  limit: number;
  /** Only the engine of this name (an empty page when there is none). */
  name?: string;
}

/** Engines by name; `next_page_id` is the first name of the next page. */
export async function searchEngines(ctx: ServiceContext, input: SearchEnginesInput): Promise<Page<EngineInfo>> {
  const conditions: SQL[] = [];
  if (input.name !== undefined) conditions.push(eq(engines.name, input.name));
  if (input.pageId !== undefined) {
    const [cursorRow] = await ctx.db.select({ name: engines.name }).from(engines).where(eq(engines.name, input.pageId));
    if (!cursorRow) throw validationError('query', ['page_id'], 'Unknown page_id');
    conditions.push(gte(engines.name, input.pageId));
  }
  const rows = await ctx.db
    .select()
    .from(engines)
    .where(and(...conditions))
    .orderBy(asc(engines.name))
    .limit(input.limit + 1);
  const next = rows.length > input.limit ? rows[input.limit] : undefined;
  return { items: await toEngineInfos(ctx.db, rows.slice(0, input.limit), ctx.runtimeProbes), next_page_id: next?.name ?? null };
}
