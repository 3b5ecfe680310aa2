import type { OpenAPIHono } from '@hono/zod-openapi';
import { createApiApp } from '../http/app.js';
import { apiKeyAuth } from './auth.js';
import type { Database } from './db/client.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerSandboxSpecRoutes } from './routes/sandbox-specs/index.js';
import { registerSandboxRoutes } from './routes/sandboxes/index.js';
import type { ReconcilerKick, ServiceContext } from './services/context.js';

export interface SandboxServerAppOptions {
  db: Database;
  /** The real Reconciler, or a recorder in tests. */
  reconciler: ReconcilerKick;
  /** Keys accepted on /api; empty turns authentication off. */
  apiKeys: readonly string[];
  maxRunningSandboxes: number;
}

/**
 * The control plane's HTTP API. /alive, /health and /openapi.json are open; everything under /api
 * needs an API key. Handlers only write intent and kick the reconciler; they never call Docker.
 */
export function createSandboxServerApp(options: SandboxServerAppOptions): OpenAPIHono {
  const app = createApiApp();
  const ctx: ServiceContext = { db: options.db, reconciler: options.reconciler, maxRunningSandboxes: options.maxRunningSandboxes };
  registerHealthRoutes(app, options.db);
  app.use('/api/*', apiKeyAuth({ apiKeys: options.apiKeys }));
  registerSandboxSpecRoutes(app, ctx);
  registerSandboxRoutes(app, ctx);
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', { type: 'http', scheme: 'bearer' });
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: { title: 'sandbox-server', version: '1' },
    security: options.apiKeys.length > 0 ? [{ apiKey: [] }] : [],
  });
  return app;
}
