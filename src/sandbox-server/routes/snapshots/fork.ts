import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { SandboxIdParamsSchema, SandboxInfoSchema } from '../../models/sandbox.js';
import { ForkSandboxRequestSchema } from '../../models/snapshot.js';
import { forkSandbox } from '../../services/sandboxes/fork-sandbox.js';
import { withPreviewUrls } from '../../services/sandboxes/sandbox-info.js';
import { previewBaseOf } from '../sandboxes/preview-base.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'post',
  path: '/api/v1/sandboxes/{id}/fork',
  tags: ['Snapshots'],
  summary: 'Snapshot a sandbox and start a new one from the snapshot; answers the new sandbox, STARTING',
  request: {
    params: SandboxIdParamsSchema,
    body: { required: false, content: { 'application/json': { schema: ForkSandboxRequestSchema } } },
  },
  responses: {
    200: { description: 'The new sandbox', content: { 'application/json': { schema: SandboxInfoSchema } } },
    ...errorResponses(401, 404, 409, 422),
  },
});

export const registerForkSandbox: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    const fork = await forkSandbox(ctx, { sandboxId: c.req.valid('param').id, name: c.req.valid('json').name });
    return c.json(withPreviewUrls(fork, previewBaseOf(c, ctx)), 200);
  });
};
