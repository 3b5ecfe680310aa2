import { and, eq, isNull, ne } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { brokeredSecrets, sandboxes, sandboxSpecs } from '../db/schema.js';
import { specPlaceholder, type BrokeredSecret } from './brokered-secret.js';
import { ExpiringMap } from '../../expiring-map.js';

/**
 * A live sandbox's brokered secrets: its spec's (placeholders derived from its session key) and
 * its conversations' (stored). None for a sandbox deleted or unknown.
 */
export async function brokeredSecretsOf(db: Database, sandboxId: string): Promise<BrokeredSecret[]> {
  const [sandbox] = await db
    .select({ sessionApiKey: sandboxes.sessionApiKey, initialEnv: sandboxSpecs.initialEnv, secretHosts: sandboxSpecs.secretHosts })
    .from(sandboxes)
    .innerJoin(sandboxSpecs, eq(sandboxes.specId, sandboxSpecs.id))
    .where(and(eq(sandboxes.id, sandboxId), ne(sandboxes.desiredState, 'DELETED'), isNull(sandboxes.deletedAt)));
  if (!sandbox) return [];
  const fromSpec = Object.entries(sandbox.secretHosts).map(([name, hosts]) => ({
    name,
    placeholder: specPlaceholder(sandbox.sessionApiKey, name),
    value: sandbox.initialEnv[name] ?? '',
    hosts,
  }));
  const rows = await db
    .select({ name: brokeredSecrets.name, placeholder: brokeredSecrets.placeholder, value: brokeredSecrets.value, hosts: brokeredSecrets.hosts })
    .from(brokeredSecrets)
    .where(eq(brokeredSecrets.sandboxId, sandboxId));
  return [...fromSpec, ...rows];
}

/** How long the proxy trusts what it read of a sandbox's secrets: a conversation started a moment ago is seen at its agent's first request. */
const FRESH_MS = 1_000;

/** brokeredSecretsOf, read at most once a second per sandbox, one read at a time. */
export class SandboxSecrets {
  readonly #db: Database;
  readonly #cache = new ExpiringMap<string, Promise<BrokeredSecret[]>>(FRESH_MS);

  constructor(db: Database) {
    this.#db = db;
  }

  of(sandboxId: string, now = Date.now()): Promise<BrokeredSecret[]> {
    const cached = this.#cache.get(sandboxId, now);
    if (cached) return cached;
    const secrets = brokeredSecretsOf(this.#db, sandboxId);
    this.#cache.set(sandboxId, secrets, now);
    secrets.catch(() => this.#cache.delete(sandboxId));
    return secrets;
  }
}
