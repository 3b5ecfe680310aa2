import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import packageJson from '../../../package.json' with { type: 'json' };
import { type ServerInfo, ServerInfoSchema } from '../../contracts/agent-server/server-info.js';
import { jsonContent } from './responses.js';

const StatusSchema = z.object({ status: z.string() });

const aliveRoute = createRoute({
  method: 'get',
  path: '/alive',
  tags: ['Server'],
  summary: 'Liveness: the process answers',
  responses: { 200: jsonContent(StatusSchema, 'Alive') },
});

const healthRoute = createRoute({
  method: 'get',
  path: '/health',
  tags: ['Server'],
  summary: 'Health check (open without a session key)',
  responses: { 200: jsonContent(z.literal('OK'), 'Healthy') },
});

const readyRoute = createRoute({
  method: 'get',
  path: '/ready',
  tags: ['Server'],
  summary: 'Readiness: conversations are loaded and requests are served',
  responses: { 200: jsonContent(StatusSchema, 'Ready') },
});

const rootRoute = createRoute({
  method: 'get',
  path: '/',
  tags: ['Server'],
  summary: 'Server information at the root, for clients that probe it first',
  responses: { 200: jsonContent(ServerInfoSchema, 'Server information') },
});

const serverInfoRoute = createRoute({
  method: 'get',
  path: '/server_info',
  tags: ['Server'],
  summary: 'Version and uptime',
  responses: { 200: jsonContent(ServerInfoSchema, 'Server information') },
});

export interface ServerDetailsOptions {
  /** Epoch milliseconds when the server started. */
  startedAtMs: number;
  /** Milliseconds since a conversation last changed; 0 while an agent runs. */
  idleMillis: () => number;
}

/**
 * The app exists only once conversations are loaded, so whoever can reach /ready may be told the
 * server is ready.
 */
export function registerServerDetails(app: OpenAPIHono, options: ServerDetailsOptions): void {
  app.openapi(aliveRoute, (c) => c.json({ status: 'ok' }, 200));
  app.openapi(healthRoute, (c) => c.json('OK' as const, 200));
  app.openapi(readyRoute, (c) => c.json({ status: 'ready' }, 200));
  const serverInfo = (): ServerInfo => ({
    title: 'agent-server',
    version: packageJson.version,
    uptime: (Date.now() - options.startedAtMs) / 1000,
    idle_time: options.idleMillis() / 1000,
    docs: '/docs',
  });
  app.openapi(rootRoute, (c) => c.json(serverInfo(), 200));
  app.openapi(serverInfoRoute, (c) => c.json(serverInfo(), 200));
}
