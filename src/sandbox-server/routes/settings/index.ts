import type { RouteRegistrar } from '../types.js';
import { registerGetSettings } from './get.js';
import { registerUpdateSettings } from './update.js';

export const registerSettingsRoutes: RouteRegistrar = (app, ctx) => {
  registerGetSettings(app, ctx);
  registerUpdateSettings(app, ctx);
};
