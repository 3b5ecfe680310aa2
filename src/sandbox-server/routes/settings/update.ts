import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '../../models/common.js';
import { SettingsSchema, UpdateSettingsRequestSchema } from '../../models/settings.js';
import { updateSettings } from '../../services/settings/update-settings.js';
import type { RouteRegistrar } from '../types.js';

const route = createRoute({
  method: 'patch',
  path: '/api/v1/settings',
  tags: ['Settings'],
  summary: "Change the installation's shared settings for every replica (extension, admin keys only); the default spec follows, other specs keep their own",
  request: { body: { required: true, content: { 'application/json': { schema: UpdateSettingsRequestSchema } } } },
  responses: {
    200: { description: 'The settings now in force', content: { 'application/json': { schema: SettingsSchema } } },
    ...errorResponses(401, 403),
  },
});

export const registerUpdateSettings: RouteRegistrar = (app, ctx) => {
  app.openapi(route, async (c) => c.json(await updateSettings(ctx, c.req.valid('json')), 200));
};
