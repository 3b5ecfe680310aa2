import { isIP } from 'node:net';
import { z } from '@hono/zod-openapi';
import { LookupSecretSchema, StaticSecretSchema } from '../../contracts/agent-server/secrets.js';

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOST_PATTERN = new RegExp(`^(?:\\*\\.)?(?:${LABEL}\\.)*${LABEL}\\.?$`, 'i');

/** One host a brokered secret goes to: a name, a wildcard over a name's subdomains, or an address. */
export const SecretHostSchema = z
  .string()
  .max(253)
  .refine((host) => HOST_PATTERN.test(host) || isIP(host) !== 0, 'must be a host name (api.github.com), *. and a name for its subdomains (*.github.com), or an IP address; no scheme, port or path');

/** The hosts a brokered secret's value is put in requests to, by the egress proxy. */
export const SecretHostsSchema = z
  .array(SecretHostSchema)
  .min(1)
  .max(32)
  .openapi({
    description:
      'Our extension, brokered secrets: the sandbox holds only a placeholder; the control plane\'s egress proxy puts the value in place of the placeholder in the headers of HTTPS requests to these hosts, and nowhere else',
    example: ['github.com', 'api.github.com'],
  });

/** Whether a secret's value can go in an HTTP header as it is (no line breaks or other control characters). */
export function headerSafe(value: string): boolean {
  return !/[\0-\x08\x0a-\x1f\x7f]/.test(value);
}

export const HEADER_SAFE_MESSAGE = 'a brokered secret is put in request headers: its value must have no line breaks or other control characters';

/** A StaticSecret that may name hosts (our extension): then it is brokered, and its value must be given. */
export const AppConversationStaticSecretSchema = StaticSecretSchema.extend({ hosts: SecretHostsSchema.optional() });

/**
 * A conversation's secrets as the control plane takes them: OpenHands' (a plain value, a
 * StaticSecret, a LookupSecret), with `hosts` on a StaticSecret to broker it.
 */
export const AppConversationSecretsSchema = z
  .record(z.string().min(1), z.union([z.string(), z.discriminatedUnion('kind', [AppConversationStaticSecretSchema, LookupSecretSchema])]))
  .superRefine((secrets, ctx) => {
    for (const [name, secret] of Object.entries(secrets)) {
      if (typeof secret === 'string' || secret.kind !== 'StaticSecret' || secret.hosts === undefined) continue;
      if (!secret.value) ctx.addIssue({ code: 'custom', path: [name, 'value'], message: 'a brokered secret needs its value' });
      else if (!headerSafe(secret.value)) ctx.addIssue({ code: 'custom', path: [name, 'value'], message: HEADER_SAFE_MESSAGE });
    }
  });
export type AppConversationSecrets = z.output<typeof AppConversationSecretsSchema>;
