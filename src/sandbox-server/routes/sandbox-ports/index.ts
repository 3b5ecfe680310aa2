import type { IncomingMessage, ServerResponse } from 'node:http';
import { SESSION_KEY_HEADER_LOWER } from '../../../contracts/agent-server/session-key.js';
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { bridgeWebSocket } from '../../../http/bridge-websocket.js';
import { errorResponses, ErrorDetailSchema, SuccessSchema } from '../../models/common.js';
import { PREVIEW_HOST_ROUTE, previewAddressOf } from '../../preview/preview-host.js';
import { signPreviewToken } from '../../preview/preview-token.js';
import { createPreviewFactsReader, type PreviewFactsReader, previewPortOf, revokePreviewTokens } from '../../services/previews/preview-ports.js';
import { parsePath, requireUpgrade } from '../websocket-route.js';
import type { SandboxPortRouteDeps } from './deps.js';
import { CreatePreviewTokenRequestSchema, DEFAULT_PREVIEW_TOKEN_SECONDS, SandboxIdPathSchema, PreviewTokenSchema, SandboxPortParamsSchema, SandboxPortSchema } from '../../models/sandbox-port.js';
import { previewHostUrl, previewPathUrl } from './preview-urls.js';
import { servePreview } from './serve-preview.js';
import { createPreviewFastPath, type PreviewFastPathOptions } from './preview-fast-path.js';
import { reachSandbox } from '../reach-sandbox.js';

/** Path mode: `/api/v1/sandboxes/{id}/ports/{port}/...` (answered here, not by the API key check alone). */
export const PREVIEW_PATH = /^\/api\/v1\/sandboxes\/[^/]+\/ports\/[^/]+(\/|$)/;
const TOKEN_PATH = /^\/api\/v1\/sandboxes\/[^/]+\/ports\/[^/]+\/token$/;

/** Whether a request is preview traffic in path mode, which checks its own access (see servePreview). */
export function isPreviewRequest(method: string, path: string): boolean {
  return PREVIEW_PATH.test(path) && !(method === 'POST' && TOKEN_PATH.test(path));
}

const IdParamsSchema = z.object({ id: SandboxIdPathSchema });
const detail = (description: string) => ({ description, content: { 'application/json': { schema: ErrorDetailSchema } } });

const createTokenRoute = createRoute({
  method: 'post',
  path: '/api/v1/sandboxes/{id}/ports/{port}/token',
  tags: ['Previews'],
  summary: 'Make a preview link for a sandbox port',
  description:
    'A signed, expiring token for one port of one sandbox (our extension). Its `url` opens the app in a browser without an API key: the first request trades the token for an HttpOnly cookie scoped to that sandbox port. DELETE /api/v1/sandboxes/{id}/preview-tokens ends every link given before.',
  request: { params: SandboxPortParamsSchema, body: { content: { 'application/json': { schema: CreatePreviewTokenRequestSchema } }, required: false } },
  responses: { 200: { description: 'The token and its links', content: { 'application/json': { schema: PreviewTokenSchema } } }, ...errorResponses(401, 404, 409, 422) },
});

const listPortsRoute = createRoute({
  method: 'get',
  path: '/api/v1/sandboxes/{id}/ports',
  tags: ['Previews'],
  summary: "A sandbox's exposed ports and their preview URLs",
  description: "The spec's exposed_ports but the agent-server's own. Any other port answers at the same URLs too, by number.",
  request: { params: IdParamsSchema },
  responses: { 200: { description: 'The ports', content: { 'application/json': { schema: z.array(SandboxPortSchema) } } }, ...errorResponses(401, 404, 409) },
});

const revokeRoute = createRoute({
  method: 'delete',
  path: '/api/v1/sandboxes/{id}/preview-tokens',
  tags: ['Previews'],
  summary: "End every preview link of a sandbox",
  description: 'Links and cookies given before stop working at once on this server, and within 2 s on other replicas.',
  request: { params: IdParamsSchema },
  responses: { 200: { description: 'Revoked', content: { 'application/json': { schema: SuccessSchema } } }, ...errorResponses(401, 404, 409) },
});

/**
 * Preview URLs (our extension): any port of a sandbox, through the control plane, in path mode
 * (`/api/v1/sandboxes/{id}/ports/{port}/...`) and in host mode (`{port}-{id}.{PREVIEW_DOMAIN}`, see
 * previewHostMode), with preview links for browsers; and `/api/v1/sandboxes/{id}/port-forward/{port}`,
 * one TCP connection over a WebSocket, for `sandboxctl port-forward`.
 */
export function sandboxPortRoutes(deps: SandboxPortRouteDeps): {
  register(app: OpenAPIHono): void;
  hostMode: MiddlewareHandler;
  /** The preview fast path (preview-fast-path.ts), sharing these routes' preview facts. */
  fastPath(options: PreviewFastPathOptions): (req: IncomingMessage, res: ServerResponse) => boolean;
} {
  const facts = createPreviewFactsReader(deps.ctx);
  return {
    register: (app) => registerRoutes(app, deps, facts),
    fastPath: (options) => createPreviewFastPath(deps, facts, options),
    /** Serves requests whose Host names a sandbox port under PREVIEW_DOMAIN; it goes before every other check. */
    hostMode: async function previewHostMode(c, next) {
      const address = previewAddressOf(c.req.header('host'), deps.previewDomain);
      if (!address) return next();
      c.set('routeLabel', PREVIEW_HOST_ROUTE);
      const url = new URL(c.req.url);
      return servePreview(c, deps, facts, { sandboxId: address.sandboxId, portSegment: String(address.port), path: url.pathname, cookiePath: '/', prefix: '' });
    },
  };
}

function registerRoutes(app: OpenAPIHono, deps: SandboxPortRouteDeps, facts: PreviewFactsReader): void {
  const origin = (url: string) => deps.ctx.publicUrl ?? new URL(url).origin;

  app.openapi(listPortsRoute, async (c) => {
    const { id } = c.req.valid('param');
    const known = await facts.read(id);
    const base = origin(c.req.url);
    const ports = known.exposedPorts
      .filter((entry) => entry.name !== 'AGENT_SERVER')
      .map((entry) => ({
        name: entry.name,
        port: entry.container_port,
        public: entry.public === true,
        url: previewPathUrl(base, id, entry.container_port),
        host_url: previewHostUrl(base, deps.previewDomain, id, entry.container_port),
      }));
    return c.json(ports, 200);
  });

  app.openapi(createTokenRoute, async (c) => {
    const { id, port: segment } = c.req.valid('param');
    // Without a body the validator passes nothing on, defaults included.
    const expiresIn = (c.req.valid('json') as { expires_in?: number } | undefined)?.expires_in ?? DEFAULT_PREVIEW_TOKEN_SECONDS;
    const known = await facts.read(id);
    const { port } = previewPortOf(known, segment);
    const expiresAt = new Date(Date.now() + expiresIn * 1000);
    const token = signPreviewToken({ sessionApiKey: known.sessionApiKey, previewKey: known.previewKey }, id, port, expiresAt);
    const base = origin(c.req.url);
    const withToken = (url: string) => `${url}?preview_token=${token}`;
    const hostUrl = previewHostUrl(base, deps.previewDomain, id, port);
    return c.json(
      { sandbox_id: id, port, token, url: withToken(previewPathUrl(base, id, port)), host_url: hostUrl && withToken(hostUrl), expires_at: expiresAt.toISOString() },
      200,
    );
  });

  app.openapi(revokeRoute, async (c) => {
    const { id } = c.req.valid('param');
    await revokePreviewTokens(deps.ctx, id);
    facts.forget(id);
    return c.json({ success: true as const }, 200);
  });

  app.get('/api/v1/sandboxes/:id/port-forward/:port', async (c) => {
    const { id, port } = parsePath(SandboxPortParamsSchema, { id: c.req.param('id'), port: c.req.param('port') });
    requireUpgrade(c.req.header('upgrade'));
    const number = previewPortOf(await facts.read(id), port).port;
    const target = await reachSandbox(deps, id);
    const socketUrl = `${target.baseUrl.replace(/^http/, 'ws')}/api/port-forward/${number}`;
    return deps.upgradeWebSocket(c, bridgeWebSocket(socketUrl, () => deps.recordActivity(id), { [SESSION_KEY_HEADER_LOWER]: target.sessionApiKey }));
  });

  for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
    app.openAPIRegistry.registerPath({
      method,
      path: '/api/v1/sandboxes/{id}/ports/{port}/{path}',
      tags: ['Previews'],
      summary: 'Forward a request to an app listening in the sandbox (preview URL, path mode)',
      description:
        "Any method, streamed both ways, and WebSocket upgrades, to the app on that port at `/{path}` (X-Forwarded-Prefix names this prefix). Access: an API key, a preview token (?preview_token=, traded for a cookie), or the port marked public in the spec. `POST .../token` is this server's own (see above). A paused sandbox is resumed when its spec allows.",
      request: { params: SandboxPortParamsSchema.extend({ path: z.string() }) },
      responses: {
        200: { description: "The app's answer" },
        303: { description: 'A preview token was traded for a cookie: the same URL without the token' },
        401: detail('Neither an API key nor a valid preview token or cookie'),
        404: detail('Sandbox not found'),
        409: detail('The sandbox is paused (and its spec does not resume on access), deleted or failed'),
        422: { description: 'The port is neither a number from 1 to 65535 nor an exposed port name' },
        502: detail('Nothing answers on that port in the sandbox'),
        503: detail("The sandbox's engine is unavailable, or the sandbox did not come up in time"),
      },
    });
  }
  const pathMode = async (c: Parameters<MiddlewareHandler>[0]) => {
    const { id, port } = parsePath(SandboxPortParamsSchema, { id: c.req.param('id'), port: c.req.param('port') });
    const prefix = `/api/v1/sandboxes/${id}/ports/${port}`;
    const pathname = new URL(c.req.url).pathname;
    const rest = pathname.slice(pathname.indexOf(`/ports/${port}`) + `/ports/${port}`.length);
    // A page's relative links resolve against the last slash: `.../ports/5173` would lose the port.
    if (rest === '' && (c.req.method === 'GET' || c.req.method === 'HEAD')) {
      const url = new URL(c.req.url);
      return c.redirect(`${url.pathname}/${url.search}`, 308);
    }
    return servePreview(c, deps, facts, { sandboxId: id, portSegment: port, path: rest || '/', cookiePath: prefix, prefix });
  };
  app.all('/api/v1/sandboxes/:id/ports/:port', pathMode);
  app.all('/api/v1/sandboxes/:id/ports/:port/*', pathMode);
}
