import { SESSION_KEY_HEADER } from '../../../contracts/agent-server/session-key.js';
import type { NodeWebSocket } from '@hono/node-ws';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { z } from 'zod';
import { bridgeWebSocket } from '../../../http/bridge-websocket.js';
import { invalidValuesFromZod, RequestValidationError } from '../../../errors/index.js';
import { errorPage, prefersHtml } from '../../../http/error-page.js';
import type { ListeningAddresses } from '../../ports/listening-address.js';
import { nothingListens, nothingListensTitle } from '../../ports/nothing-listens.js';
import { forwardToPort } from '../../ports/forward-to-port.js';
import { tunnelToPort } from '../../ports/tunnel-to-port.js';

/** Everything under here goes to an app in the sandbox: the agent-server does not limit or read its bodies. */
export const PORTS_PREFIX = '/api/ports/';

const PortParamsSchema = z.object({ port: z.coerce.number().int().min(1).max(65_535) });

export interface PortRoutesOptions {
  upgradeWebSocket: NodeWebSocket['upgradeWebSocket'];
  /** Shared with the server's fast path (ports-fast-path.ts), which takes only ports found here. */
  listeningAddresses: ListeningAddresses;
}

/**
 * Apps the agent starts in the sandbox, reached through the agent-server (our extension; the
 * control plane's preview URLs and `sandboxctl port-forward` ride on these):
 * - `/api/ports/{port}/{path}`: any method, and WebSocket upgrades, to the app on that port at
 *   `/{path}`;
 * - `/api/port-forward/{port}`: a WebSocket whose binary frames are one TCP connection to the port.
 */
export function registerPortRoutes(app: OpenAPIHono, options: PortRoutesOptions): void {
  const listeningAddress = (port: number) => options.listeningAddresses.find(port);
  for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
    app.openAPIRegistry.registerPath({
      method,
      path: '/api/ports/{port}/{path}',
      tags: ['Ports'],
      summary: 'Forward a request to an app listening in the sandbox (our extension)',
      description:
        'Any method, bodies streamed both ways and unlimited, and WebSocket upgrades, to the app on 127.0.0.1, 0.0.0.0 or ::1 at that port, at `/{path}`. The session key is not passed on.',
      request: { params: z.object({ port: z.string(), path: z.string() }) },
      responses: {
        200: { description: "The app's answer" },
        401: { description: `Invalid or missing ${SESSION_KEY_HEADER}` },
        422: { description: 'The port is not a number from 1 to 65535' },
        502: { description: 'Nothing answers on that port' },
      },
    });
  }

  const toApp = async (c: Context) => {
    const port = portOf(c);
    const address = await listeningAddress(port);
    if (address === null) return nothingListensAnswer(c, port);
    const url = new URL(c.req.url);
    const prefix = `${PORTS_PREFIX}${c.req.param('port')}`;
    const path = url.pathname.length > prefix.length ? url.pathname.slice(prefix.length) : '/';
    if (c.req.header('upgrade')?.toLowerCase() === 'websocket') {
      const origin = c.req.header('origin');
      const host = address.includes(':') ? `[${address}]` : address;
      return options.upgradeWebSocket(c, bridgeWebSocket(`ws://${host}:${port}${path}${url.search}`, undefined, origin ? { origin } : {}));
    }
    try {
      return await forwardToPort(c.req.raw, address, port, `${path}${url.search}`);
    } catch {
      return nothingListensAnswer(c, port);
    }
  };
  app.all('/api/ports/:port', toApp);
  app.all('/api/ports/:port/*', toApp);

  app.get('/api/port-forward/:port', async (c) => {
    const port = portOf(c);
    const address = await listeningAddress(port);
    if (address === null) return nothingListensAnswer(c, port);
    return options.upgradeWebSocket(c, tunnelToPort(address, port));
  });
}

function portOf(c: Context): number {
  const parsed = PortParamsSchema.safeParse({ port: c.req.param('port') });
  if (!parsed.success) throw new RequestValidationError(invalidValuesFromZod(parsed.error, 'path'));
  return parsed.data.port;
}

function nothingListensAnswer(c: Context, port: number): Response {
  const error = nothingListens(port);
  if (prefersHtml(c.req.header('accept'))) return errorPage(502, nothingListensTitle(port), error.message);
  throw error;
}
