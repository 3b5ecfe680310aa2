import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { SandboxLlmUsageSchema } from '../../models/llm-usage.js';
import { SandboxIdParamsSchema } from '../../models/sandbox.js';
import { getSandboxLlmUsage } from '../../services/sandboxes/get-sandbox-llm-usage.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'get',
  path: '/api/v1/sandboxes/{id}/llm-usage',
  tags: ['Sandboxes'],
  summary: "What the sandbox's agents used of their LLM, as the LLM relay counted it (our extension)",
  request: { params: SandboxIdParamsSchema },
  responses: {
    200: { description: 'Calls and tokens, in all and per conversation', content: { 'application/json': { schema: SandboxLlmUsageSchema } } },
    ...errorResponses(401, 404),
  },
});

export const registerSandboxLlmUsage: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => c.json(await getSandboxLlmUsage(ctx, c.req.valid('param').id), 200));
};
