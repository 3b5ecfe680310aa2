import { and, isNotNull, ne, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { sandboxes } from '../../db/schema.js';

/** Live sandboxes by the agent-server version their container runs (those with a known version). */
export async function countSandboxesByAgentServerVersion(db: Database): Promise<Record<string, number>> {
  const rows = await db
    .select({ version: sandboxes.agentServerVersion, count: sql<number>`count(*)::int` })
    .from(sandboxes)
    .where(and(ne(sandboxes.desiredState, 'DELETED'), isNotNull(sandboxes.agentServerVersion)))
    .groupBy(sandboxes.agentServerVersion);
  return Object.fromEntries(rows.map((row) => [row.version as string, row.count]));
}
