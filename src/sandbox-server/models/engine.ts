import { z } from '@hono/zod-openapi';
import { ADVERTISE_HOST_PATTERN, DOCKER_URL_PATTERN, ENGINE_HEALTHS, ENGINE_NAME_PATTERN, ENGINE_STATES, RUNTIME_PROBE_STATUSES } from '../../contracts/engine.js';
import { engineAddressProblems } from '../net/engine-address.js';
import { LimitQuerySchema, PageIdQuerySchema, pageSchema } from '../../contracts/paging.js';

const LABEL_KEY = /^[a-zA-Z0-9](?:[a-zA-Z0-9._/-]{0,62})$/;

/** Engine labels, and the constraints a spec puts on them: a few short keys and values. */
export const EngineLabelsSchema = z
  .record(z.string(), z.string().max(63))
  .superRefine((labels, ctx) => {
    const keys = Object.keys(labels);
    if (keys.length > 32) ctx.addIssue({ code: 'custom', message: 'at most 32 labels' });
    for (const key of keys) {
      if (!LABEL_KEY.test(key)) ctx.addIssue({ code: 'custom', path: [key], message: 'must be 1-63 letters, digits, ".", "_", "/" or "-", starting with a letter or digit' });
    }
  })
  .openapi('EngineLabels', { example: { zone: 'a', gpu: 'none' } });

export const EngineNameSchema = z.string().regex(ENGINE_NAME_PATTERN, 'must be 1-40 lower-case letters, digits and inner dashes');

export const RuntimeProbeInfoSchema = z
  .object({
    runtime: z.string().openapi({ example: 'runsc' }),
    status: z.enum(RUNTIME_PROBE_STATUSES).openapi({ description: 'ok; failed (detail says why: the failing step\'s own message); unknown when no image was on the engine to test with' }),
    detail: z.string().nullable().openapi({ example: "ls: cannot access '/': Invalid argument (exit code 2)" }),
    image: z.string().nullable(),
    duration_ms: z.number().int(),
    probed_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('RuntimeProbe', {
    description: 'The self-test of one OCI runtime on the engine: a short container running `ls -la`, `stat`, a write and a process (our extension)',
  });

export const EngineInfoSchema = z
  .object({
    name: z.string(),
    docker_url: z.string().openapi({ example: 'unix:///var/run/docker.sock' }),
    advertise_host: z.string().openapi({ example: '127.0.0.1' }),
    max_sandboxes: z.number().int().nullable(),
    labels: z.record(z.string(), z.string()),
    /** Intent: ACTIVE takes new sandboxes; CORDONED and DRAINING take none. */
    state: z.enum(ENGINE_STATES),
    /** Observed by the engine's reconciler; null until it first looked. */
    health: z.enum(ENGINE_HEALTHS).nullable(),
    health_detail: z.string().nullable(),
    last_seen_at: z.string().openapi({ format: 'date-time' }).nullable(),
    /** Live sandboxes on it (warm-pool members included). */
    sandboxes: z.number().int(),
    /** While DRAINING: sandboxes moved off it so far, those still on it (warm-pool members, retired rather than moved, not counted), and of those the ones whose spec forbids moving. */
    drain: z
      .object({ moved: z.number().int(), remaining: z.number().int(), staying: z.number().int() })
      .nullable()
      .openapi({ description: 'Progress of a drain (our extension); null unless the engine is DRAINING' }),
    /** Null while this replica has not finished testing the engine's runtimes. */
    runtimes: z
      .array(RuntimeProbeInfoSchema)
      .nullable()
      .openapi({ description: "Self-tests of the engine's runtimes, run when the server started or the engine was registered; a failed runtime is not used (our extension). Null until they finish" }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('EngineInfo');
export type EngineInfo = z.infer<typeof EngineInfoSchema>;

export const EnginePageSchema = pageSchema(EngineInfoSchema).openapi('EnginePage');

export const SearchEnginesQuerySchema = z.object({
  page_id: PageIdQuerySchema,
  limit: LimitQuerySchema,
  name: z.string().min(1).optional(),
});

export const EngineNameParamsSchema = z.object({ name: z.string().min(1) });

export const RegisterEngineRequestSchema = z
  .object({
    name: EngineNameSchema,
    docker_url: z.string().regex(DOCKER_URL_PATTERN, 'must be unix:///path, tcp://host:port or ssh://[user@]host[:port]'),
    advertise_host: z.string().regex(ADVERTISE_HOST_PATTERN, 'must be a host name or address, without scheme or port'),
    max_sandboxes: z.number().int().min(1).max(1_000_000).nullable().default(null),
    labels: EngineLabelsSchema.default({}),
  })
  .strict()
  .superRefine((request, ctx) => {
    for (const problem of engineAddressProblems(request.docker_url, request.advertise_host)) {
      ctx.addIssue({ code: 'custom', path: [problem.field], message: problem.msg });
    }
  })
  .openapi('RegisterEngineRequest');
export type RegisterEngineRequest = z.infer<typeof RegisterEngineRequestSchema>;
