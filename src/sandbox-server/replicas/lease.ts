import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { leases } from '../db/schema.js';

/**
 * Takes the lease `name` for `holder`, or renews it, for `ttlMs` from now by the database's clock.
 * One statement: it succeeds when the lease is free, expired or already the holder's, so two
 * replicas asking at once never both get it. Answers whether `holder` holds it now.
 */
export async function acquireLease(db: Database, name: string, holder: string, ttlMs: number): Promise<boolean> {
  const expiresAt = sql`now() + ${ttlMs} * interval '1 millisecond'`;
  const taken = await db
    .insert(leases)
    .values({ name, holder, expiresAt })
    .onConflictDoUpdate({
      target: leases.name,
      set: { holder, expiresAt },
      setWhere: sql`${leases.holder} = ${holder} or ${leases.expiresAt} < now()`,
    })
    .returning({ holder: leases.holder });
  return taken.length === 1;
}

/** Gives the lease up, if `holder` still has it, so that another replica need not wait it out. */
export async function releaseLease(db: Database, name: string, holder: string): Promise<void> {
  await db.delete(leases).where(and(eq(leases.name, name), eq(leases.holder, holder)));
}
