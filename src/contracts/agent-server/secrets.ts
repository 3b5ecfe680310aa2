/**
 * Conversation secrets in OpenHands' wire format: a plain string, or a secret source told apart by
 * `kind`: `StaticSecret` (a value held here) or `LookupSecret` (a value fetched from `url` with
 * `headers`, each time a command names it). Both may carry a `description`, which the agent is told
 * with the secret's name; the value never reaches the model.
 */
import { z } from 'zod';

/** What a secret's value is replaced with wherever it would leave the shell. */
export const SECRET_MASK = '<secret_hidden>';

export const StaticSecretSchema = z.object({
  kind: z.literal('StaticSecret'),
  value: z.string().nullish(),
  description: z.string().nullish(),
});

export const LookupSecretSchema = z.object({
  kind: z.literal('LookupSecret'),
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).default({}),
  description: z.string().nullish(),
});

export const SecretSourceSchema = z.discriminatedUnion('kind', [StaticSecretSchema, LookupSecretSchema]);
export type SecretSource = z.output<typeof SecretSourceSchema>;

export const SecretValueSchema = z.union([z.string(), SecretSourceSchema]);
export type SecretValue = z.output<typeof SecretValueSchema>;

export const SecretsSchema = z.record(z.string().min(1), SecretValueSchema);
export type Secrets = z.output<typeof SecretsSchema>;
