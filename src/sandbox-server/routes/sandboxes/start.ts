import { createRoute } from '@hono/zod-openapi';
import { validationError } from '../../../errors/index.js';
import { errorResponses } from '../../models/common.js';
import { SandboxInfoSchema, StartSandboxQuerySchema, StartSandboxRequestSchema } from '../../models/sandbox.js';
import { startSandbox } from '../../services/sandboxes/start-sandbox.js';
import { withPreviewUrls } from '../../services/sandboxes/sandbox-info.js';
import { previewBaseOf } from './preview-base.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'post',
  path: '/api/v1/sandboxes',
  tags: ['Sandboxes'],
  summary: 'Start a sandbox; answers at once with status STARTING',
  description:
    'sandbox_spec_id may be given in the query or in the JSON body; absent, the default spec is used. Our extension snapshot_id starts the sandbox from a snapshot (its files, its /data, its spec) with a new id and session key; its data is copied before the answer.',
  request: {
    query: StartSandboxQuerySchema,
    body: { required: false, content: { 'application/json': { schema: StartSandboxRequestSchema } } },
  },
  responses: {
    200: { description: 'The new sandbox', content: { 'application/json': { schema: SandboxInfoSchema } } },
    ...errorResponses(401, 404, 409),
  },
});

export const registerStartSandbox: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    const fromQuery = c.req.valid('query').sandbox_spec_id;
    const fromBody = c.req.valid('json').sandbox_spec_id ?? undefined;
    if (fromQuery !== undefined && fromBody !== undefined && fromQuery !== fromBody) {
      throw validationError('body', ['sandbox_spec_id'], 'differs from sandbox_spec_id in the query');
    }
    const snapshotId = c.req.valid('json').snapshot_id ?? undefined;
    return c.json(withPreviewUrls(await startSandbox(ctx, { specId: fromBody ?? fromQuery, snapshotId }), previewBaseOf(c, ctx)), 200);
  });
};
