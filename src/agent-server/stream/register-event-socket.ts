import type { NodeWebSocket } from '@hono/node-ws';
import type { Env, Hono } from 'hono';
import type { WSEvents } from 'hono/ws';
import type { WebSocket } from 'ws';
import { SESSION_KEY_HEADER, SESSION_KEY_QUERY } from '../../contracts/agent-server/session-key.js';
import { logger } from '../../logger.js';
import type { EventLog } from '../store/index.js';
import { StreamCloseCode, type StreamClose } from './close-codes.js';
import { EventSubscriber, type SubscriberLimits } from './event-subscriber.js';
import type { EventStreamSource } from './event-stream-source.js';
import { isAuthFrame, withFirstFrameAuth } from './first-frame-auth.js';
import { sendErrorEvent } from './server-error-event.js';
import { fullStateEvent } from './full-state-event.js';
import { parseStreamStart, startPosition, type StreamQuery } from './stream-start.js';

export interface EventSocketDeps {
  upgradeWebSocket: NodeWebSocket['upgradeWebSocket'];
  source: EventStreamSource;
  isValidSessionKey: (candidate: string | undefined) => boolean;
  /** Socket buffer above which the stream waits for the client to read. Default 4 MiB. */
  maxBufferedBytes?: number;
  /** How long a socket may stay over `maxBufferedBytes` before its client is closed (1013). Default 30 s. */
  slowSubscriberTimeoutMs?: number;
}

const DEFAULT_MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
const DEFAULT_SLOW_SUBSCRIBER_TIMEOUT_MS = 30_000;

/**
 * Mounts `GET /sockets/events/:conversation_id`: the first frame is the conversation's `full_state`,
 * then each event of its log as one JSON text frame, in append order, each exactly once.
 *
 * Auth: the session key in the query (SESSION_KEY_QUERY) or its header (SESSION_KEY_HEADER), or, with neither, the
 * first frame `{"type":"auth","session_api_key":...}` (./first-frame-auth). Start: `resend_mode=all`
 * (or the older `resend_all=true`) from the first event, `resend_mode=since&after_timestamp=<t>`
 * from the first event at or after t, or our `after_event_id=<id>` just after that event; by
 * default the stream starts with the events appended after the connection. Refusals are made after
 * the upgrade, as close codes (see ./close-codes), because that is what OpenHands clients expect.
 *
 * A client may send a SendMessageRequest as a JSON text frame; it goes to `source.sendMessage`, in
 * the order sent. A frame that is not JSON, or a message the source refuses, is answered with a
 * ServerErrorEvent frame and the socket stays open, as in OpenHands.
 */
export function registerEventSocket<E extends Env>(app: Hono<E>, deps: EventSocketDeps): void {
  const limits: SubscriberLimits = {
    maxBufferedBytes: deps.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
    slowSubscriberTimeoutMs: deps.slowSubscriberTimeoutMs ?? DEFAULT_SLOW_SUBSCRIBER_TIMEOUT_MS,
  };
  app.get(
    '/sockets/events/:conversation_id',
    deps.upgradeWebSocket(async (c) => {
      const conversationId = c.req.param('conversation_id') ?? '';
      const key = c.req.query(SESSION_KEY_QUERY) ?? c.req.header(SESSION_KEY_HEADER);
      const query: StreamQuery = {
        resend_mode: c.req.query('resend_mode'),
        after_timestamp: c.req.query('after_timestamp'),
        resend_all: c.req.query('resend_all'),
        after_event_id: c.req.query('after_event_id'),
      };
      const stream = async (): Promise<WSEvents<WebSocket>> => {
        const plan = await planStream(conversationId, query, deps);
        if ('close' in plan) return closingEvents(plan.close);
        return streamingEvents(conversationId, plan.log, plan.cursor, deps.source, limits);
      };
      if (key === undefined && !deps.isValidSessionKey(undefined)) return withFirstFrameAuth(deps.isValidSessionKey, stream);
      if (!deps.isValidSessionKey(key)) return closingEvents({ code: StreamCloseCode.unauthorized, reason: 'Authentication failed' });
      return stream();
    }),
  );
}

type StreamPlan = { close: StreamClose } | { log: EventLog; cursor: number };

/** Decides, before the upgrade, whether to stream and from where; never throws. */
async function planStream(conversationId: string, query: StreamQuery, deps: EventSocketDeps): Promise<StreamPlan> {
  const start = parseStreamStart(query);
  if ('code' in start) return { close: start };
  let log: EventLog | undefined;
  try {
    log = await deps.source.eventLog(conversationId);
  } catch (error) {
    logger.error({ err: error, conversationId }, 'event stream: could not open the event log');
    return { close: { code: StreamCloseCode.internalError, reason: 'could not open the event log' } };
  }
  if (!log) return { close: { code: StreamCloseCode.conversationNotFound, reason: 'Conversation not found' } };
  // Taken now, before the upgrade: events appended from here on are this client's "live" events.
  const cursor = await startPosition(start, log);
  if (typeof cursor !== 'number') return { close: cursor };
  return { log, cursor };
}

function closingEvents({ code, reason }: StreamClose): WSEvents<WebSocket> {
  return { onOpen: (_event, ws) => ws.close(code, reason) };
}

function streamingEvents(
  conversationId: string,
  log: EventLog,
  cursor: number,
  source: EventStreamSource,
  limits: SubscriberLimits,
): WSEvents<WebSocket> {
  let subscriber: EventSubscriber | undefined;
  let stopLive: (() => void) | undefined;
  let closed = false;
  let delivered: Promise<void> = Promise.resolve();
  return {
    onOpen(_event, ws) {
      if (!ws.raw) throw new Error('the event stream needs the ws socket that @hono/node-ws exposes as raw');
      const started = new EventSubscriber(ws.raw, log, cursor, limits, conversationId);
      subscriber = started;
      source.fullState(conversationId).then(
        (state) => {
          started.start(fullStateEvent(state));
          if (closed) return;
          stopLive = source.onLiveFrame(conversationId, (frame) => started.sendLive(frame));
        },
        (error: unknown) => {
          logger.error({ err: error, conversationId }, 'event stream: could not read the conversation state');
          started.close(StreamCloseCode.internalError, 'could not read the conversation state');
        },
      );
    },
    onMessage(event, ws) {
      // Chained, so messages reach the conversation in the order the client sent them.
      delivered = delivered.then(() => deliverClientMessage(source, conversationId, event.data, ws.raw));
    },
    onClose() {
      closed = true;
      stopLive?.();
      subscriber?.stop();
    },
    onError(event) {
      logger.debug({ conversationId, err: (event as Event & { error?: unknown }).error }, 'event stream: socket error');
    },
  };
}

async function deliverClientMessage(
  source: EventStreamSource,
  conversationId: string,
  data: unknown,
  socket: WebSocket | undefined,
): Promise<void> {
  if (typeof data !== 'string') {
    logger.warn({ conversationId }, 'event stream: refused a binary frame from the client');
    sendErrorEvent(socket, 'ValueError', 'frames must be JSON text');
    return;
  }
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch (error) {
    logger.warn({ conversationId }, 'event stream: refused a client frame that is not JSON');
    sendErrorEvent(socket, 'JSONDecodeError', (error as Error).message);
    return;
  }
  if (isAuthFrame(message)) return;
  try {
    await source.sendMessage(conversationId, message);
  } catch (error) {
    logger.warn({ err: error, conversationId }, 'event stream: the conversation refused a client message');
    sendErrorEvent(socket, (error as Error).name, (error as Error).message);
  }
}
