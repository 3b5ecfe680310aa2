import { createHmac } from 'node:crypto';

/**
 * A secret the sandbox holds only as `placeholder`: the egress proxy puts `value` in its place in
 * the headers of requests to `hosts`, and nowhere else.
 */
export interface BrokeredSecret {
  name: string;
  placeholder: string;
  value: string;
  /** Host names, exact (`api.github.com`) or a wildcard over subdomains (`*.github.com`). */
  hosts: readonly string[];
}

/**
 * Every placeholder starts with this: recognisable in a header, and in an error message a user
 * reads ("why does GitHub say my token is bad?"). 43 base64url characters (256 bits) follow.
 */
export const PLACEHOLDER_PREFIX = 'sbx_brokered_';
export const PLACEHOLDER_PATTERN = /sbx_brokered_[A-Za-z0-9_-]{43}/g;

/**
 * The placeholder a sandbox's container gets for its spec's secret `name`: derived from the
 * sandbox's session key, which never enters the container, so nothing needs storing and a new
 * session key (a restart from ERROR) brings new placeholders with the new container.
 */
export function specPlaceholder(sessionApiKey: string, name: string): string {
  return derived(sessionApiKey, `spec\0${name}`);
}

/**
 * The placeholder a conversation's agent gets for its secret `name`, stored with the value. Derived
 * (not drawn) so that a start task repeating its step after a restart sends the same one.
 */
export function conversationPlaceholder(sessionApiKey: string, conversationId: string, name: string): string {
  return derived(sessionApiKey, `conversation\0${conversationId}\0${name}`);
}

function derived(key: string, what: string): string {
  return PLACEHOLDER_PREFIX + createHmac('sha256', key).update(`brokered-secret\0${what}`).digest('base64url');
}

/** A name matches an exact host, or a wildcard's subdomains at any depth (`*.github.com`: not github.com itself). */
export function hostMatches(host: string, pattern: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  const rule = pattern.toLowerCase();
  if (rule.startsWith('*.')) return name.endsWith(rule.slice(1));
  return name === rule;
}

/** The secrets whose hosts include `host`. */
export function secretsForHost(secrets: readonly BrokeredSecret[], host: string): BrokeredSecret[] {
  return secrets.filter((secret) => secret.hosts.some((pattern) => hostMatches(host, pattern)));
}
