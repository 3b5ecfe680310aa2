import type { RouteRegistrar } from '../types.js';
import { registerCordonEngine } from './cordon.js';
import { registerDrainEngine } from './drain.js';
import { registerRegisterEngine } from './register.js';
import { registerRemoveEngine } from './remove.js';
import { registerSearchEngines } from './search.js';
import { registerUncordonEngine } from './uncordon.js';

export const registerEngineRoutes: RouteRegistrar = (app, ctx) => {
  for (const register of [registerRegisterEngine, registerSearchEngines, registerCordonEngine, registerUncordonEngine, registerDrainEngine, registerRemoveEngine]) {
    register(app, ctx);
  }
};
