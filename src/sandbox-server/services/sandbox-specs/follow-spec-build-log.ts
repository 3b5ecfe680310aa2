import { and, eq, isNull, sql } from 'drizzle-orm';
import { NotFoundError } from '../../../errors/index.js';
import { sandboxSpecs, specBuildLogs } from '../../db/schema.js';
import type { ServiceContext } from '../context.js';

/** How often a followed build's log is read again while it builds (the builder writes it out about as often). */
const POLL_MS = 200;

/** The log text after `offset` characters, and whether the build still runs. */
async function readFrom(ctx: ServiceContext, specId: string, offset: number): Promise<{ text: string; length: number; building: boolean } | undefined> {
  const [row] = await ctx.db
    .select({
      text: sql<string>`substring(${specBuildLogs.log} from ${offset + 1}::int)`,
      length: sql<number>`char_length(${specBuildLogs.log})::int`,
      status: sandboxSpecs.buildStatus,
    })
    .from(sandboxSpecs)
    .innerJoin(specBuildLogs, eq(specBuildLogs.specId, sandboxSpecs.id))
    .where(and(eq(sandboxSpecs.id, specId), isNull(sandboxSpecs.deletedAt)));
  return row && { text: row.text, length: row.length, building: row.status === 'BUILDING' };
}

/**
 * The build log of a spec made from a Dockerfile: what it holds now, then, with `follow`, what the
 * build adds until it ends (READY or FAILED) or `signal` aborts. 404 for a spec that is unknown,
 * deleted, or names an image (it has no build).
 */
export async function followSpecBuildLog(ctx: ServiceContext, input: { specId: string; follow: boolean; signal: AbortSignal }): Promise<AsyncIterable<string>> {
  const first = await readFrom(ctx, input.specId, 0);
  if (!first) throw new NotFoundError(`Sandbox spec ${input.specId} not found, or not built from a Dockerfile: it has no build log`);
  return (async function* () {
    let read = first;
    let offset = 0;
    for (;;) {
      if (read.text) yield read.text;
      offset = read.length;
      if (!input.follow || !read.building || input.signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      const next = await readFrom(ctx, input.specId, offset);
      if (!next) return;
      read = next;
    }
  })();
}
