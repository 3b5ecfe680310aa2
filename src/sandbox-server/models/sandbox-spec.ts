import { z } from '@hono/zod-openapi';
import { AGENT_SERVER_CONTAINER_PORT, AGENT_SERVER_PORT_NAME } from '../../contracts/sandbox.js';
import { OCI_RUNTIMES, SANDBOX_NETWORKS } from '../../contracts/sandbox.js';
import { EgressPolicyInfoSchema, EgressPolicySchema } from './egress-policy.js';
import { EngineLabelsSchema } from './engine.js';
import { SPEC_BUILD_STATUSES, SPEC_IMAGE_REPOSITORY } from '../../contracts/spec-build.js';
import { HEADER_SAFE_MESSAGE, headerSafe, SecretHostsSchema } from './secret-hosts.js';
import { LimitQuerySchema, PageIdQuerySchema, pageSchema } from '../../contracts/paging.js';

const SPEC_IMAGE_TAG_EXAMPLE = `${SPEC_IMAGE_REPOSITORY}:<sha256 of the Dockerfile and the context>`;

/** What a secret initial_env entry's value is answered as (pydantic's SecretStr, as for keys). */
export const MASKED_ENV_VALUE = '**********';

export const ExposedPortSchema = z
  .object({
    name: z.string().regex(/^[A-Z][A-Z0-9_]{0,63}$/, 'must be upper case letters, digits and "_", e.g. AGENT_SERVER'),
    container_port: z.number().int().min(1).max(65_535),
    public: z.boolean().optional().openapi({
      description: 'Its preview URL answers anyone, with no API key or preview token (our extension); default false',
    }),
  })
  .strict()
  .openapi('ExposedPort');

export const SpecBuildInfoSchema = z
  .object({
    status: z.enum(SPEC_BUILD_STATUSES).openapi({
      description: 'BUILDING until the image is on every engine its sandboxes may be placed on, then READY; FAILED says why in detail, and its log stays readable',
    }),
    detail: z.string().nullable().openapi({ description: 'Why the build failed; null otherwise' }),
    cached: z.boolean().openapi({ description: 'The image was already built from the same Dockerfile and context: nothing was built again' }),
    started_at: z.string().openapi({ format: 'date-time' }),
    finished_at: z.string().nullable().openapi({ format: 'date-time' }),
  })
  .openapi('SpecBuildInfo');
export type SpecBuildInfo = z.infer<typeof SpecBuildInfoSchema>;

export const SandboxSpecInfoSchema = z
  .object({
    id: z.string(),
    command: z.array(z.string()).nullable(),
    initial_env: z.record(z.string(), z.string()).openapi({ description: `Each entry named in secret_env shows ${JSON.stringify(MASKED_ENV_VALUE)} instead of its value` }),
    secret_env: z.array(z.string()).openapi({ description: 'Our extension: the initial_env entries that are secret, whose values are never answered' }),
    secret_hosts: z.record(z.string(), z.array(z.string())).openapi({ description: 'Our extension: the brokered secret_env entries and the hosts each goes to; their sandboxes hold placeholders' }),
    working_dir: z.string(),
    created_at: z.string().openapi({ format: 'date-time' }),
    image: z.string(),
    exposed_ports: z.array(ExposedPortSchema),
    cpus: z.number().nullable().openapi({ description: 'CPU limit of each sandbox; null: none' }),
    memory_mb: z.number().int().nullable().openapi({ description: 'Memory limit of each sandbox in MB; null: none' }),
    pids_limit: z.number().int().nullable().openapi({ description: 'Most processes each sandbox may run; null: none' }),
    disk_mb: z.number().int().nullable().openapi({
      description:
        "Most MB each sandbox's writable layer and data volume may hold together (our extension); a sandbox over it is stopped, ERROR with a status_detail saying so. null: none",
    }),
    runtime: z.enum(OCI_RUNTIMES).openapi({ description: 'OCI runtime of its containers (our extension): runsc is gVisor, runc plain Docker' }),
    network: z.enum(SANDBOX_NETWORKS).openapi({
      description:
        'What each sandbox reaches from its own private network (our extension): internet, none (nothing outside itself), or allowlist (what `egress` allows). Never another sandbox, nor the host but for the ports an allowlist opens.',
    }),
    egress: EgressPolicyInfoSchema.openapi({ description: 'What its allowlist sandboxes may reach (our extension); empty lists for other networks' }),
    idle_pause_seconds: z.number().int().nullable().openapi({
      description:
        'Pause a running sandbox unused for this long: no request or WebSocket frame through the control plane, and no agent at work (its agent-server is asked first). null: never.',
    }),
    ttl_seconds: z.number().int().nullable(),
    resume_on_access: z.boolean(),
    warm_pool_size: z.number().int().openapi({ description: 'Ready sandboxes kept for starts to claim (our extension)' }),
    engine_labels: z
      .record(z.string(), z.string())
      .openapi({ description: 'Labels an engine must carry, all with these values, to run its sandboxes (our extension)' }),
    movable: z.boolean().openapi({ description: 'A drain may move its paused sandboxes to another engine by snapshot (our extension); false leaves them until deleted' }),
    warm_pool_ready: z
      .number()
      .int()
      .openapi({ description: 'Warm-pool members ready to claim now (our extension); unclaimed members are not listed as sandboxes' }),
    is_default: z.boolean(),
    build: SpecBuildInfoSchema.nullable().openapi({
      description: `Our extension: the build of a spec made from a Dockerfile (its image is then ${SPEC_IMAGE_TAG_EXAMPLE}); null for a spec naming an image`,
    }),
  })
  .openapi('SandboxSpecInfo');
export type SandboxSpecInfo = z.infer<typeof SandboxSpecInfoSchema>;

export const SandboxSpecPageSchema = pageSchema(SandboxSpecInfoSchema).openapi('SandboxSpecInfoPage');

export const SearchSandboxSpecsQuerySchema = z.object({ page_id: PageIdQuerySchema, limit: LimitQuerySchema });

export const SandboxSpecIdParamsSchema = z.object({ id: z.string().min(1) });

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** The limits are stored in 32-bit integer columns. */
export const INT32_MAX = 2_147_483_647;
/** A pool larger than this is a typo; the server-wide cap (MAX_WARM_SANDBOXES) bounds them together. */
export const MAX_WARM_POOL_SIZE = 100;
const AGENT_SERVER_PORT = { name: AGENT_SERVER_PORT_NAME, container_port: AGENT_SERVER_CONTAINER_PORT };

/** What the request schema says of each resource limit. */
const LIMIT_DEFAULT = (setting: string) => `Absent: the installation's ${setting} (GET /api/v1/settings). null: no limit (asked for explicitly).`;

/** Most characters of a build's Dockerfile. */
export const MAX_DOCKERFILE_CHARS = 1024 * 1024;

export const SpecBuildRequestSchema = z
  .object({
    dockerfile: z.string().min(1).max(MAX_DOCKERFILE_CHARS).openapi({
      description: 'The Dockerfile, as text. It builds with no network: FROM an image the engines have, COPY from the context, RUN what needs no download',
    }),
    context_tar_base64: z
      .string()
      .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64')
      .optional()
      .openapi({
        description:
          'The build context: a tar archive (gzip allowed), base64. Absent: an empty context. At most SPEC_BUILD_CONTEXT_MAX_MB unpacked; a .dockerignore in it is not applied here (sandboxctl applies it when packing)',
      }),
  })
  .strict()
  .openapi('SpecBuildRequest');
export type SpecBuildRequest = z.infer<typeof SpecBuildRequestSchema>;

/** Our extension: POST /api/v1/sandbox-specs. Absent fields take these defaults. */
export const CreateSandboxSpecRequestSchema = z
  .object({
    /** Defaults to the image, as OpenHands names Docker specs (for a build: the image it builds). */
    id: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[^\s\p{Cc}]*$/u, 'must not contain spaces or control characters')
      .optional(),
    image: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[^\s\p{Cc}]*$/u, 'must not contain spaces or control characters')
      .optional()
      .openapi({
        description:
          "Any Linux image with bash: the control plane brings the agent-server in (read-only, at /opt/sandbox-server) unless it is built from ours or `command` is given. An image an engine has and that lacks bash is refused (422); one no engine has yet is checked at its first start, whose sandbox turns ERROR saying why. Required unless `build` is given.",
      }),
    build: SpecBuildRequestSchema.optional().openapi({
      description:
        'Our extension, instead of `image`: build the image from a Dockerfile and a context. The answer is the spec BUILDING (or READY at once when the same input was built before); GET /api/v1/sandbox-specs/{id}/build-log follows the build',
    }),
    command: z
      .array(z.string())
      .min(1)
      .nullable()
      .default(null)
      .openapi({ description: "Run this instead of the agent-server (which the image must then serve on its port itself); null: the image's agent-server, or ours brought in" }),
    initial_env: z
      .record(z.string(), z.string())
      .superRefine((env, ctx) => {
        for (const name of Object.keys(env)) {
          if (!ENV_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'must be a valid environment variable name' });
        }
      })
      .default({}),
    /** Our extension: initial_env entries whose values are write-only, answered as MASKED_ENV_VALUE. */
    secret_env: z.array(z.string()).max(256).default([]).openapi({
      description: 'Our extension: names of initial_env entries that are secret. Their values are never answered (shown masked) and are masked in what the agent prints',
    }),
    secret_hosts: z.record(z.string(), SecretHostsSchema).default({}).openapi({
      description:
        "Our extension, brokered secrets: secret_env entries whose values never enter the sandbox. Its variable holds a placeholder, which the control plane's egress proxy replaces with the value in the headers of HTTPS requests to the hosts listed (Authorization, Basic credentials as git sends them, any header), and only there",
    }),
    working_dir: z.string().startsWith('/', 'must be an absolute path').default('/workspace'),
    exposed_ports: z
      .array(ExposedPortSchema)
      .max(16)
      .default([AGENT_SERVER_PORT])
      .refine((ports) => new Set(ports.map((p) => p.name)).size === ports.length, 'port names must be unique')
      .refine((ports) => new Set(ports.map((p) => p.container_port)).size === ports.length, 'container ports must be unique'),
    // Each limit left out is the installation's default (shared settings); only null asks for none.
    // Docker's smallest CPU share; smaller numbers would not fit the column (a 32-bit float) either.
    cpus: z.number().min(0.01).max(1024).nullable().optional().openapi({ description: LIMIT_DEFAULT('default_cpus') }),
    memory_mb: z.number().int().min(16).max(INT32_MAX).nullable().optional().openapi({ description: LIMIT_DEFAULT('default_memory_mb') }),
    pids_limit: z.number().int().min(1).max(INT32_MAX).nullable().optional().openapi({ description: LIMIT_DEFAULT('default_pids_limit') }),
    disk_mb: z.number().int().min(16).max(INT32_MAX).nullable().optional().openapi({ description: LIMIT_DEFAULT('default_disk_mb') }),
    /** Absent: the installation's default_runtime (shared settings). */
    runtime: z.enum(OCI_RUNTIMES).optional(),
    network: z.enum(SANDBOX_NETWORKS).default('internet'),
    /** Our extension: what `allowlist` sandboxes may reach; each sandbox may change its own with PATCH. */
    egress: EgressPolicySchema.default({ allow: [], deny: [] }),
    idle_pause_seconds: z.number().int().min(1).max(INT32_MAX).nullable().default(null),
    ttl_seconds: z.number().int().min(1).max(INT32_MAX).nullable().default(null),
    resume_on_access: z.boolean().default(true),
    /** Our extension: ready sandboxes kept for starts to claim; they count toward MAX_WARM_SANDBOXES, not MAX_RUNNING_SANDBOXES. */
    warm_pool_size: z.number().int().min(0).max(MAX_WARM_POOL_SIZE).default(0),
    /** Our extension: its sandboxes are placed only on engines carrying all these labels. */
    engine_labels: EngineLabelsSchema.default({}),
    /** Our extension: false keeps its sandboxes on their engine through a drain, until they are deleted. */
    movable: z.boolean().default(true),
  })
  .strict()
  .superRefine((spec, ctx) => {
    if ((spec.image === undefined) === (spec.build === undefined)) {
      ctx.addIssue({ code: 'custom', path: spec.image === undefined ? ['image'] : ['build'], message: 'give either image or build, not both and not neither' });
    }
    if (spec.network !== 'allowlist' && spec.egress.allow.length + spec.egress.deny.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['egress'], message: 'applies to network "allowlist" only' });
    }
    spec.secret_env.forEach((name, index) => {
      if (!(name in spec.initial_env)) ctx.addIssue({ code: 'custom', path: ['secret_env', index], message: 'must name an entry of initial_env' });
    });
    for (const name of Object.keys(spec.secret_hosts)) {
      if (spec.network !== 'allowlist') {
        ctx.addIssue({ code: 'custom', path: ['secret_hosts', name], message: 'a brokered secret needs network "allowlist": only its traffic passes the egress proxy, which puts the value in' });
      } else if (!spec.secret_env.includes(name)) ctx.addIssue({ code: 'custom', path: ['secret_hosts', name], message: 'must name an entry of secret_env' });
      else if (!headerSafe(spec.initial_env[name] ?? '')) ctx.addIssue({ code: 'custom', path: ['initial_env', name], message: HEADER_SAFE_MESSAGE });
    }
  })
  .openapi('CreateSandboxSpecRequest');
export type CreateSandboxSpecRequest = z.infer<typeof CreateSandboxSpecRequestSchema>;
