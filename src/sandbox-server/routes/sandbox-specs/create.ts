import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { CreateSandboxSpecRequestSchema, SandboxSpecInfoSchema } from '../../models/sandbox-spec.js';
import { createSandboxSpec } from '../../services/sandbox-specs/create-sandbox-spec.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'post',
  path: '/api/v1/sandbox-specs',
  tags: ['Sandbox specs'],
  summary: 'Add a sandbox spec (extension)',
  request: { body: { required: true, content: { 'application/json': { schema: CreateSandboxSpecRequestSchema } } } },
  responses: {
    201: { description: 'The new spec', content: { 'application/json': { schema: SandboxSpecInfoSchema } } },
    ...errorResponses(401, 409),
  },
});

export const registerCreateSandboxSpec: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => c.json(await createSandboxSpec(ctx, c.req.valid('json')), 201));
};
