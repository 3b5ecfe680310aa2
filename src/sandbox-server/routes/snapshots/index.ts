import type { RouteRegistrar } from '../types.js';
import { registerBatchGetSnapshots } from './batch-get.js';
import { registerDeleteSnapshot } from './delete.js';
import { registerForkSandbox } from './fork.js';
import { registerSearchSnapshots } from './search.js';
import { registerTakeSnapshot } from './take.js';

export const registerSnapshotRoutes: RouteRegistrar = (app, ctx) => {
  for (const register of [registerTakeSnapshot, registerForkSandbox, registerSearchSnapshots, registerBatchGetSnapshots, registerDeleteSnapshot]) {
    register(app, ctx);
  }
};
