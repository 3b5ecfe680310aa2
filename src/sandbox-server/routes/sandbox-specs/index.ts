import type { RouteRegistrar } from '../types.js';
import { registerBatchGetSandboxSpecs } from './batch-get.js';
import { registerSpecBuildLog } from './build-log.js';
import { registerCreateSandboxSpec } from './create.js';
import { registerDeleteSandboxSpec } from './delete.js';
import { registerSearchSandboxSpecs } from './search.js';

export const registerSandboxSpecRoutes: RouteRegistrar = (app, ctx) => {
  for (const register of [registerSearchSandboxSpecs, registerBatchGetSandboxSpecs, registerCreateSandboxSpec, registerDeleteSandboxSpec, registerSpecBuildLog]) {
    register(app, ctx);
  }
};
