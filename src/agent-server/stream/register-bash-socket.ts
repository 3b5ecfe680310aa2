import type { NodeWebSocket } from '@hono/node-ws';
import type { Env, Hono } from 'hono';
import type { WSEvents } from 'hono/ws';
import type { WebSocket } from 'ws';
import { logger } from '../../logger.js';
import type { BashCommands } from '../bash/bash-commands.js';
import type { BashEventLog } from '../bash/bash-event-log.js';
import type { BashEvent } from '../../contracts/agent-server/bash.js';
import { ExecuteBashRequestSchema } from '../../contracts/agent-server/bash.js';
import { SESSION_KEY_HEADER, SESSION_KEY_QUERY } from '../../contracts/agent-server/session-key.js';
import { StreamCloseCode } from './close-codes.js';
import { isAuthFrame, withFirstFrameAuth } from './first-frame-auth.js';
import { sendErrorEvent } from './server-error-event.js';

export interface BashSocketDeps {
  upgradeWebSocket: NodeWebSocket['upgradeWebSocket'];
  events: BashEventLog;
  commands: BashCommands;
  isValidSessionKey: (candidate: string | undefined) => boolean;
}

const TRUE_VALUES = new Set(['1', 'true', 't', 'yes', 'y', 'on']);

/**
 * Mounts `GET /sockets/bash-events` (OpenHands' bash event stream): every bash event recorded from
 * the connection on, one JSON text frame each; with `resend_mode=all` (or `resend_all=true`) every
 * stored one first. Auth as on the conversation stream (query, header or first frame). A client
 * may send an ExecuteBashRequest frame to start a command; a frame that is not one is answered
 * with a BashError frame and the socket stays open.
 */
export function registerBashSocket<E extends Env>(app: Hono<E>, deps: BashSocketDeps): void {
  app.get(
    '/sockets/bash-events',
    deps.upgradeWebSocket((c) => {
      const key = c.req.query(SESSION_KEY_QUERY) ?? c.req.header(SESSION_KEY_HEADER);
      const resendMode = c.req.query('resend_mode');
      const resendAll = resendMode === undefined && TRUE_VALUES.has((c.req.query('resend_all') ?? '').toLowerCase());
      if (resendMode !== undefined && resendMode !== 'all') {
        return { onOpen: (_event, ws) => ws.close(StreamCloseCode.badRequest, "resend_mode must be 'all'") };
      }
      const stream = (): WSEvents<WebSocket> => bashEvents(deps, resendMode === 'all' || resendAll);
      if (key === undefined && !deps.isValidSessionKey(undefined)) return withFirstFrameAuth(deps.isValidSessionKey, async () => stream());
      if (!deps.isValidSessionKey(key)) {
        return { onOpen: (_event, ws) => ws.close(StreamCloseCode.unauthorized, 'Authentication failed') };
      }
      return stream();
    }),
  );
}

function bashEvents(deps: BashSocketDeps, resend: boolean): WSEvents<WebSocket> {
  let unsubscribe: (() => void) | undefined;
  return {
    onOpen(_event, ws) {
      const send = (event: BashEvent) => {
        if (ws.raw?.readyState === ws.raw?.OPEN) ws.send(JSON.stringify(event));
      };
      // Replay and subscription happen in one synchronous step, so no event falls between them.
      if (resend) for (const event of deps.events.all()) send(event);
      unsubscribe = deps.events.subscribe(send);
    },
    onMessage(event, ws) {
      void startFromFrame(deps.commands, event.data, ws.raw);
    },
    onClose() {
      unsubscribe?.();
    },
  };
}

async function startFromFrame(commands: BashCommands, data: unknown, socket: WebSocket | undefined): Promise<void> {
  let frame: unknown;
  try {
    frame = JSON.parse(typeof data === 'string' ? data : '');
  } catch (error) {
    sendErrorEvent(socket, 'JSONDecodeError', (error as Error).message, 'BashError');
    return;
  }
  if (isAuthFrame(frame)) return;
  const request = ExecuteBashRequestSchema.safeParse(frame);
  if (!request.success) {
    sendErrorEvent(socket, 'ValidationError', request.error.issues.map((issue) => issue.message).join('; '), 'BashError');
    return;
  }
  try {
    await commands.start(request.data);
  } catch (error) {
    logger.warn({ err: error }, 'bash stream: a command from the socket was refused');
    sendErrorEvent(socket, (error as Error).name, (error as Error).message, 'BashError');
  }
}
