import { z } from '@hono/zod-openapi';
import { SANDBOX_STATUSES } from '../../contracts/sandbox.js';
import { LimitQuerySchema, PageIdQuerySchema, pageSchema } from '../../contracts/paging.js';

export const SandboxStatusSchema = z.enum(SANDBOX_STATUSES).openapi('SandboxStatus');

export const ExposedUrlSchema = z
  .object({
    name: z.string().openapi({ example: 'AGENT_SERVER' }),
    url: z.string().openapi({
      example: 'http://127.0.0.1:32768',
      description:
        "AGENT_SERVER: the agent-server's direct URL on its host port. Every other name (VSCODE, WORKER_1, the spec's own): its preview URL through the control plane (path mode, by name), under PUBLIC_URL or else the origin the request came to",
    }),
    /** The host port the engine published it on (for AGENT_SERVER, the one in `url`). */
    port: z.number().int(),
  })
  .openapi('ExposedUrl');

export const SandboxInfoSchema = z
  .object({
    id: z.string(),
    created_by_user_id: z.string().nullable(),
    sandbox_spec_id: z.string(),
    status: SandboxStatusSchema,
    status_detail: z.string().nullable().openapi({
      description:
        'Our extension. ERROR or MISSING: why. STARTING: what it waits for (an image pull and its progress, the container, the agent-server to answer). Otherwise null',
    }),
    /** Only while RUNNING: the key the sandbox's agent-server expects in its session-key header. */
    session_api_key: z.string().nullable(),
    exposed_urls: z.array(ExposedUrlSchema).nullable(),
    created_at: z.string().openapi({ format: 'date-time' }),
    /**
     * Our extension: the agent-server version the sandbox's container runs (package version and a
     * hash of what its image was built from), or null for an image the control plane did not build.
     */
    agent_server_version: z.string().nullable(),
    /** Our extension: the engine the sandbox was placed on (GET /api/v1/engines); it stays there. */
    engine: z.string(),
  })
  .openapi('SandboxInfo');
export type SandboxInfo = z.infer<typeof SandboxInfoSchema>;

export const SandboxPageSchema = pageSchema(SandboxInfoSchema).openapi('SandboxPage');

export const SearchSandboxesQuerySchema = z.object({
  page_id: PageIdQuerySchema,
  limit: LimitQuerySchema,
  status: SandboxStatusSchema.optional(),
});

export const SandboxIdParamsSchema = z.object({ id: z.string().min(1) });

export const StartSandboxQuerySchema = z.object({ sandbox_spec_id: z.string().min(1).optional() });

export const StartSandboxRequestSchema = z
  .object({
    sandbox_spec_id: z.string().min(1).nullable().optional(),
    /** Our extension: start from this snapshot (its files, its data, its spec) instead of afresh. */
    snapshot_id: z.string().min(1).nullable().optional(),
  })
  .strict()
  .openapi('StartSandboxRequest');
