import type { RouteRegistrar } from '../types.js';
import { registerBatchGetSandboxes } from './batch-get.js';
import { registerDeleteSandbox } from './delete.js';
import { registerSandboxLlmUsage } from './llm-usage.js';
import { registerGetSandboxEgress } from './get-egress.js';
import { registerPauseSandbox } from './pause.js';
import { registerResumeSandbox } from './resume.js';
import { registerSearchSandboxes } from './search.js';
import { registerStartSandbox } from './start.js';
import { registerUpdateSandbox } from './update.js';

export const registerSandboxRoutes: RouteRegistrar = (app, ctx) => {
  for (const register of [
    registerSearchSandboxes,
    registerBatchGetSandboxes,
    registerStartSandbox,
    registerPauseSandbox,
    registerResumeSandbox,
    registerDeleteSandbox,
    registerSandboxLlmUsage,
    registerUpdateSandbox,
    registerGetSandboxEgress,
  ]) {
    register(app, ctx);
  }
};
