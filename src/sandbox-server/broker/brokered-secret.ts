import { createHmac, randomBytes } from 'node:crypto';

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

/** A fresh placeholder for a conversation's secret, stored with its value. */
export function randomPlaceholder(): string {
  return PLACEHOLDER_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * The placeholder a sandbox's container gets for its spec's secret `name`: derived from the
 * sandbox's session key, which never enters the container, so nothing needs storing and a new
 * session key (a restart from ERROR) brings new placeholders with the new container.
 */
export function specPlaceholder(sessionApiKey: string, name: string): string {
  return PLACEHOLDER_PREFIX + createHmac('sha256', sessionApiKey).update(`brokered-secret\0${name}`).digest('base64url');
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
