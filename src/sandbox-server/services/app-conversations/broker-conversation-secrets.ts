import { eq, sql } from 'drizzle-orm';
import type { Secrets } from '../../../contracts/agent-server/secrets.js';
import { DomainError, validationError } from '../../../errors/index.js';
import { conversationPlaceholder } from '../../broker/brokered-secret.js';
import type { Database } from '../../db/client.js';
import { brokeredSecrets, sandboxes, sandboxSpecs } from '../../db/schema.js';
import type { AppConversationSecrets } from '../../models/secret-hosts.js';

/**
 * The secrets the conversation's agent-server is given: each brokered one (a StaticSecret with
 * `hosts`) as its placeholder, its value and hosts stored for the egress proxy (broker/); the
 * others as they came. Repeating it (a start task's step again after a restart) stores and gives
 * the same placeholders.
 */
export async function brokerConversationSecrets(db: Database, where: { sandboxId: string; conversationId: string }, secrets: AppConversationSecrets): Promise<Secrets> {
  const brokered = brokeredOf(secrets);
  if (brokered.length === 0) return secrets;
  const sandbox = await requireAllowlistSandbox(db, where.sandboxId);
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

function brokeredOf(secrets: AppConversationSecrets) {
  return Object.entries(secrets).flatMap(([name, secret]) =>
    typeof secret !== 'string' && secret.kind === 'StaticSecret' && secret.hosts !== undefined && secret.value ? [{ name, value: secret.value, hosts: secret.hosts, description: secret.description }] : [],
  );
}

/**
 * The sandbox of brokered secrets, which must be an `allowlist` one: only its traffic passes the
 * egress proxy that puts the values in, so elsewhere the agent would hold a placeholder good for
 * nothing. The start task fails saying so (a conflict between the request and its sandbox).
 */
async function requireAllowlistSandbox(db: Database, sandboxId: string): Promise<{ sessionApiKey: string }> {
  const sandbox = await sandboxOf(db, sandboxId);
  if (!sandbox) throw new DomainError('not_found', `sandbox ${sandboxId} not found`);
  if (sandbox.network !== 'allowlist') throw new DomainError('conflict', notAllowlist(sandboxId, sandbox.network));
  return sandbox;
}

/**
 * For a request that names its sandbox: a 422 for brokered secrets it could not carry, before
 * anything is written. A sandbox not found is the start task's to report, as without them.
 */
export async function checkBrokeredSecretsFit(db: Database, sandboxId: string | undefined, secrets: AppConversationSecrets): Promise<void> {
  const [first] = brokeredOf(secrets);
  if (!sandboxId || !first) return;
  const sandbox = await sandboxOf(db, sandboxId);
  if (sandbox && sandbox.network !== 'allowlist') throw validationError('body', ['secrets', first.name, 'hosts'], notAllowlist(sandboxId, sandbox.network));
}

function notAllowlist(sandboxId: string, network: string): string {
  return `a brokered secret needs an "allowlist" sandbox: only its traffic passes the egress proxy, which puts the value in; sandbox ${sandboxId}'s network is "${network}"`;
}

async function sandboxOf(db: Database, sandboxId: string) {
  const [sandbox] = await db
    .select({ sessionApiKey: sandboxes.sessionApiKey, network: sandboxSpecs.network })
    .from(sandboxes)
    .innerJoin(sandboxSpecs, eq(sandboxes.specId, sandboxSpecs.id))
    .where(eq(sandboxes.id, sandboxId));
  return sandbox;
}
