import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { SettingsSchema } from '../../models/settings.js';
import { getSettings } from '../../services/settings/get-settings.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'get',
  path: '/api/v1/settings',
  tags: ['Settings'],
  summary: "The installation's shared settings (extension): the default spec's warm pool, and the limits and runtime of specs that name none",
  responses: {
    200: { description: 'The settings every replica uses', content: { 'application/json': { schema: SettingsSchema } } },
    ...errorResponses(401),
  },
});

export const registerGetSettings: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => c.json(await getSettings(ctx), 200));
};
