import { and, eq, ne } from 'drizzle-orm';
import type { Transaction } from '../../db/client.js';
import { engines } from '../../db/schema.js';

/** Who the dockerd at a URL is (engines/docker-identity.ts asks it), or null when it does not answer. */
export type EngineIdentity = (dockerUrl: string) => Promise<string | null>;

/** The engine other than `name` already registered for the dockerd of this identity, if any. */
export async function engineOfIdentity(tx: Transaction, identity: string, name: string): Promise<string | null> {
  const [twin] = await tx
    .select({ name: engines.name })
    .from(engines)
    .where(and(eq(engines.dockerIdentity, identity), ne(engines.name, name)))
    .limit(1);
  return twin?.name ?? null;
}

/** Why a second row for one dockerd is refused. */
export function sameEngineMessage(name: string, twin: string, identity: string): string {
  return `Engine ${name} is the Docker engine already registered as ${twin} (${identity}); two engines on one dockerd would remove each other's containers as orphans`;
}
