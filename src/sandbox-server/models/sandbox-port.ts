import { z } from '@hono/zod-openapi';

/** A sandbox id as a path gives it: NUL never reaches the database, which refuses it. */
export const SandboxIdPathSchema = z
  .string()
  .min(1)
  .max(128)
  .refine((id) => !id.includes('\0'), 'Must not contain NUL bytes');

export const SandboxPortParamsSchema = z.object({
  id: SandboxIdPathSchema,
  port: z.string().regex(/^(\d{1,5}|[A-Z][A-Z0-9_]{0,63})$/, 'a port number from 1 to 65535, or the name of one of the spec\'s exposed_ports'),
});

/** Seven days: a link a person shares should not outlive the work it shows. */
export const MAX_PREVIEW_TOKEN_SECONDS = 7 * 24 * 3600;
export const DEFAULT_PREVIEW_TOKEN_SECONDS = 3600;

export const CreatePreviewTokenRequestSchema = z
  .object({
    expires_in: z.number().int().min(1).max(MAX_PREVIEW_TOKEN_SECONDS).default(DEFAULT_PREVIEW_TOKEN_SECONDS).openapi({ description: 'Seconds the token and its link are valid: 1 to 604800; default 3600' }),
  })
  .strict()
  .openapi('CreatePreviewTokenRequest');

export const PreviewTokenSchema = z
  .object({
    sandbox_id: z.string(),
    port: z.number().int(),
    token: z.string().openapi({ description: 'Send as ?preview_token=; a browser trades it for an HttpOnly cookie scoped to this sandbox port' }),
    url: z.string().openapi({ description: 'Opens the port in a browser without an API key (path mode, on this server)' }),
    host_url: z.string().nullable().openapi({ description: 'The same in host mode, the app at `/` on its own origin; null without PREVIEW_DOMAIN' }),
    expires_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('PreviewToken');

export const SandboxPortSchema = z
  .object({
    name: z.string().nullable().openapi({ description: "The spec's name for the port (VSCODE, WORKER_1, ...)" }),
    port: z.number().int(),
    public: z.boolean(),
    url: z.string().openapi({ description: 'Its preview URL in path mode (needs an API key or a preview token unless public)' }),
    host_url: z.string().nullable().openapi({ description: 'Its preview URL in host mode; null without PREVIEW_DOMAIN' }),
  })
  .openapi('SandboxPort');
