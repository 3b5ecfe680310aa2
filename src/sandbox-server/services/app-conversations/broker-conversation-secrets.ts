import { eq, sql } from 'drizzle-orm';
import type { Secrets } from '../../../contracts/agent-server/secrets.js';
import { DomainError } from '../../../errors/index.js';
import { conversationPlaceholder } from '../../broker/brokered-secret.js';
import type { Database } from '../../db/client.js';
import { brokeredSecrets, sandboxes } from '../../db/schema.js';
import type { AppConversationSecrets } from '../../models/secret-hosts.js';

/**
 * The secrets the conversation's agent-server is given: each brokered one (a StaticSecret with
 * `hosts`) as its placeholder, its value and hosts stored for the egress proxy (broker/); the
 * others as they came. Repeating it (a start task's step again after a restart) stores and gives
 * the same placeholders.
 */
export async function brokerConversationSecrets(db: Database, where: { sandboxId: string; conversationId: string }, secrets: AppConversationSecrets): Promise<Secrets> {
  const brokered = Object.entries(secrets).flatMap(([name, secret]) =>
    typeof secret !== 'string' && secret.kind === 'StaticSecret' && secret.hosts !== undefined && secret.value ? [{ name, value: secret.value, hosts: secret.hosts, description: secret.description }] : [],
  );
  if (brokered.length === 0) return secrets;
  const [sandbox] = await db.select({ sessionApiKey: sandboxes.sessionApiKey }).from(sandboxes).where(eq(sandboxes.id, where.sandboxId));
  if (!sandbox) throw new DomainError('not_found', `sandbox ${where.sandboxId} not found`);
  const rows = brokered.map(({ name, value, hosts }) => ({
    placeholder: conversationPlaceholder(sandbox.sessionApiKey, where.conversationId, name),
    sandboxId: where.sandboxId,
    conversationId: where.conversationId,
    name,
    value,
    hosts: hosts.map((host) => host.toLowerCase()),
  }));
  await db
    .insert(brokeredSecrets)
    .values(rows)
    .onConflictDoUpdate({ target: brokeredSecrets.placeholder, set: { value: sql`excluded.value`, hosts: sql`excluded.hosts` } });
  const placeholders = Object.fromEntries(rows.map((row, index) => [row.name, { kind: 'StaticSecret' as const, value: row.placeholder, description: brokered[index]?.description }]));
  return { ...secrets, ...placeholders };
}
