import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { EngineInfoSchema, RegisterEngineRequestSchema } from '../../models/engine.js';
import { registerEngine } from '../../services/engines/register-engine.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'post',
  path: '/api/v1/engines',
  tags: ['Engines'],
  summary: 'Register a Docker engine (extension); every replica drives it without a restart',
  request: { body: { required: true, content: { 'application/json': { schema: RegisterEngineRequestSchema } } } },
  responses: {
    201: { description: 'The new engine', content: { 'application/json': { schema: EngineInfoSchema } } },
    ...errorResponses(401, 403, 409),
  },
});

export const registerRegisterEngine: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => c.json(await registerEngine(ctx, c.req.valid('json')), 201));
};
