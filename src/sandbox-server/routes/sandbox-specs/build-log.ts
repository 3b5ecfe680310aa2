import { createRoute, z } from '@hono/zod-openapi';
import { stream } from 'hono/streaming';
import { logger } from '../../../logger.js';
import { errorResponses } from '../../models/common.js';
import { SandboxSpecIdParamsSchema } from '../../models/sandbox-spec.js';
import { followSpecBuildLog } from '../../services/sandbox-specs/follow-spec-build-log.js';
import type { RouteRegistrar } from '../types.js';

const BuildLogQuerySchema = z.object({
  follow: z
    .enum(['true', 'false', '1', '0'])
    .transform((value) => value === 'true' || value === '1')
    .default(false)
    .openapi({ description: 'Keep the answer open and stream what the build adds until it ends (READY or FAILED)' }),
});

const route = createRoute({
  method: 'get',
  path: '/api/v1/sandbox-specs/{id}/build-log',
  tags: ['Sandbox specs'],
  summary: "The build log of a spec made from a Dockerfile (extension)",
  description:
    'The image build\'s output as plain text, kept after the build. With follow=true the answer streams until the build ends; the spec\'s `build.status` then says how it ended. Ids containing "/" are sent percent-encoded (%2F).',
  request: { params: SandboxSpecIdParamsSchema, query: BuildLogQuerySchema },
  responses: {
    200: { description: 'The log so far (with follow, to its end)', content: { 'text/plain': { schema: z.string() } } },
    ...errorResponses(401, 404),
  },
});

export const registerSpecBuildLog: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    const abort = new AbortController();
    const lines = await followSpecBuildLog(ctx, { specId: c.req.valid('param').id, follow: c.req.valid('query').follow, signal: abort.signal });
    c.header('content-type', 'text/plain; charset=utf-8');
    c.header('cache-control', 'no-store');
    return stream(c, async (out) => {
      out.onAbort(() => abort.abort());
      for await (const text of lines) await out.write(text);
    }, async (err) => {
      logger.warn({ err }, 'spec build log stream failed');
    }) as never;
  });
};
