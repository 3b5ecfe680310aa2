/**
 * OpenHands' sandbox images run VS Code and a VNC desktop beside the agent-server; ours run neither.
 * These routes say so in OpenHands' shapes, so clients hide the buttons instead of failing.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { jsonContent } from '../responses.js';

const VscodeStatusSchema = z.object({ enabled: z.boolean(), running: z.boolean() }).openapi('VSCodeStatusResponse');
const DesktopUrlResponseSchema = z.object({ url: z.string().nullable() }).openapi('DesktopUrlResponse');

const vscodeStatusRoute = createRoute({
  method: 'get',
  path: '/api/vscode/status',
  tags: ['VSCode'],
  summary: 'Whether VS Code is served: never, by this agent-server',
  responses: { 200: jsonContent(VscodeStatusSchema, 'VS Code status') },
});

const desktopUrlRoute = createRoute({
  method: 'get',
  path: '/api/desktop/url',
  tags: ['Desktop'],
  summary: 'The URL of the VNC desktop: null, as this agent-server runs none',
  request: { query: z.object({ base_url: z.string().optional() }) },
  responses: { 200: jsonContent(DesktopUrlResponseSchema, 'Desktop URL') },
});

export function registerWorkspaceServices(app: OpenAPIHono): void {
  app.openapi(vscodeStatusRoute, (c) => c.json({ enabled: false, running: false }, 200));
  app.openapi(desktopUrlRoute, (c) => c.json({ url: null }, 200));
}
