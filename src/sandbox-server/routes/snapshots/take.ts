import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { SandboxIdParamsSchema } from '../../models/sandbox.js';
import { SnapshotInfoSchema, TakeSnapshotRequestSchema } from '../../models/snapshot.js';
import { takeSnapshot } from '../../services/snapshots/take-snapshot.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'post',
  path: '/api/v1/sandboxes/{id}/snapshots',
  tags: ['Snapshots'],
  summary: "Snapshot a RUNNING or PAUSED sandbox: its container's files and its /data volume, at one instant",
  description:
    'Its /data volume is first copied while it runs; a running sandbox is then paused only for the commit of its files and the copy of what changed in /data since, ' +
    'and runs again; a paused one stays paused. Answers once the snapshot exists. A sandbox holding more than SNAPSHOT_MAX_MB (writable layer and /data) is refused with 422 before anything is copied.',
  request: {
    params: SandboxIdParamsSchema,
    body: { required: false, content: { 'application/json': { schema: TakeSnapshotRequestSchema } } },
  },
  responses: {
    201: { description: 'The new snapshot', content: { 'application/json': { schema: SnapshotInfoSchema } } },
    ...errorResponses(401, 404, 409, 422),
  },
});

export const registerTakeSnapshot: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => {
    const snapshot = await takeSnapshot(ctx, { sandboxId: c.req.valid('param').id, name: c.req.valid('json').name });
    return c.json(snapshot, 201);
  });
};
