/**
 * Following a conversation's live events over the control plane's WebSocket, across reconnects:
 * after a dropped connection the stream asks for the events after the last one it delivered
 * (`after_event_id`), so a reader sees each stored event once, in order, gaps included.
 */
import type { IncomingMessage } from 'node:http';
import { WebSocket } from 'ws';
import { abortableSleep } from './abortable-sleep.js';
import { EventStreamClosedError, SandboxServerError, SandboxServerUnreachableError } from './errors.js';
import { EVENT_SOCKET_PATH, fillPath } from './operations.js';
import type { Transport } from './transport.js';
import type { ConversationEvent } from './types.js';

export interface FollowEventsOptions {
  /** Start just after this event. */
  afterEventId?: string;
  /** Without afterEventId: true replays the whole history first; false (default) starts with new events. */
  fromStart?: boolean;
  /** Ends the stream (the iterator returns). */
  signal?: AbortSignal;
  /** Failed connection attempts in a row before giving up. Default 10. */
  maxRetries?: number;
}

/** Close codes that reconnecting cannot fix: a wrong key, an unknown conversation, a bad request. */
const FINAL_CLOSE_CODES = new Set([4001, 4004, 4400]);
/** Refusals of the upgrade itself that are worth retrying: the sandbox may be coming back. */
const RETRYABLE_STATUSES = new Set([502, 503, 504]);
const RETRY_BASE_MS = 250;
const RETRY_MAX_MS = 5_000;

type Outcome =
  | { kind: 'closed'; code: number; reason: string }
  | { kind: 'refused'; status: number; body: string }
  | { kind: 'failed'; error: Error }
  | { kind: 'aborted' };

/**
 * Every frame the server sends, parsed: the stored events, the `full_state`
 * ConversationStateUpdateEvent each connection starts with, and the live StreamingDeltaEvents of a
 * streaming conversation (neither stored, so neither a resume point).
 */
export async function* followEvents(
  transport: Transport,
  conversationId: string,
  options: FollowEventsOptions = {},
): AsyncGenerator<ConversationEvent> {
  const maxRetries = options.maxRetries ?? 10;
  let afterEventId = options.afterEventId;
  let failures = 0;
  while (!options.signal?.aborted) {
    const query = afterEventId !== undefined ? { after_event_id: afterEventId } : options.fromStart ? { resend_all: 'true' } : {};
    const url = transport.url(fillPath(EVENT_SOCKET_PATH, { id: conversationId }), query);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const connection = new Connection(url, transport.authHeaders(), options.signal);
    for await (const frame of connection.frames()) {
      const event = JSON.parse(frame) as ConversationEvent;
      if (isResumePoint(event)) afterEventId = event.id;
      yield event;
    }
    const outcome = connection.outcome;
    if (outcome.kind === 'aborted') return;
    if (outcome.kind === 'closed' && FINAL_CLOSE_CODES.has(outcome.code)) throw new EventStreamClosedError(outcome.code, outcome.reason);
    if (outcome.kind === 'refused' && !RETRYABLE_STATUSES.has(outcome.status)) throw refusal(outcome.status, outcome.body, url.pathname);
    failures = connection.opened ? 0 : failures + 1;
    if (failures > maxRetries) throw giveUp(outcome, transport.baseUrl, url.pathname);
    await abortableSleep(Math.min(RETRY_BASE_MS * 2 ** failures, RETRY_MAX_MS), options.signal);
  }
}

/**
 * A stored event, which the server can resume after: not the `full_state` snapshot each connection
 * starts with, nor a StreamingDeltaEvent (a live piece of an answer, never stored: resuming after
 * its id would name an event the log does not hold).
 */
function isResumePoint(event: ConversationEvent): boolean {
  if (event.id === undefined) return false;
  if (event.kind === 'ConversationStateUpdateEvent' && event.key === 'full_state') return false;
  return (event as { kind: string }).kind !== 'StreamingDeltaEvent';
}

function refusal(status: number, body: string, path: string): SandboxServerError {
  let detail: string = body.trim() || `HTTP ${status}`;
  try {
    const parsed = JSON.parse(body) as { detail?: unknown };
    if (typeof parsed.detail === 'string') detail = parsed.detail;
  } catch {
    // Not JSON: keep the text.
  }
  return new SandboxServerError(status, detail, 'GET', path);
}

/** The error for the last of too many failed attempts in a row. */
function giveUp(outcome: Exclude<Outcome, { kind: 'aborted' }>, baseUrl: string, path: string): Error {
  switch (outcome.kind) {
    case 'refused':
      return refusal(outcome.status, outcome.body, path);
    case 'failed':
      return new SandboxServerUnreachableError(baseUrl, { cause: outcome.error });
    case 'closed':
      return new EventStreamClosedError(outcome.code, outcome.reason);
  }
}

/** One WebSocket connection: its text frames as an async iterable, then how it ended. */
class Connection {
  opened = false;
  outcome: Outcome = { kind: 'aborted' };
  readonly #frames: string[] = [];
  #ended = false;
  #wake: (() => void) | undefined;
  readonly #socket: WebSocket;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = () => {
    this.#frames.length = 0;
    this.#end({ kind: 'aborted' });
    this.#socket.terminate();
  };

  constructor(url: URL, headers: Record<string, string>, signal: AbortSignal | undefined) {
    this.#signal = signal;
    const socket = new WebSocket(url, { headers });
    this.#socket = socket;
    // Errors after the end (a late reset) have nowhere to go; before it they end the connection.
    socket.on('error', (error) => this.#end({ kind: 'failed', error }));
    socket.on('open', () => {
      this.opened = true;
    });
    socket.on('message', (data, isBinary) => {
      if (isBinary || this.#ended) return;
      this.#frames.push(String(data));
      this.#wake?.();
    });
    socket.on('close', (code, reason) => this.#end({ kind: 'closed', code, reason: reason.toString() }));
    socket.on('unexpected-response', (request, response: IncomingMessage) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => {
        this.#end({ kind: 'refused', status: response.statusCode ?? 0, body });
        request.destroy();
      });
    });
    signal?.addEventListener('abort', this.#onAbort, { once: true });
    if (signal?.aborted) this.#onAbort();
  }

  async *frames(): AsyncGenerator<string> {
    try {
      while (true) {
        const frame = this.#frames.shift();
        if (frame !== undefined) {
          yield frame;
          continue;
        }
        if (this.#ended) return;
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = undefined;
      }
    } finally {
      // The consumer stopped early (break, or an error in its loop): let the socket go.
      if (!this.#ended) {
        this.#end({ kind: 'aborted' });
        this.#socket.terminate();
      }
    }
  }

  #end(outcome: Outcome): void {
    if (this.#ended) return;
    this.#ended = true;
    this.outcome = outcome;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#wake?.();
  }
}
