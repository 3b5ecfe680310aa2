import { LiveFrames } from '../../../src/agent-server/conversations/live-frames.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerType, serve } from '@hono/node-server';
import { createNodeWebSocket } from '@hono/node-ws';
import { Hono } from 'hono';
import { WebSocket } from 'ws';
import { type EventLog, openEventLog, type StoredEvent } from '../../../src/agent-server/store/index.js';
import { type EventStreamSource, registerEventSocket } from '../../../src/agent-server/stream/index.js';

export const SESSION_KEY = 'stream-test-key';

/** A real event log that also counts its onAppend listeners and can hold back reads. */
export class ObservedEventLog implements EventLog {
  listeners = 0;
  /** Awaited before every read, when set. */
  readGate: (() => Promise<void>) | undefined;

  constructor(private readonly inner: EventLog) {}

  get size(): number {
    return this.inner.size;
  }
  get recovery(): EventLog['recovery'] {
    return this.inner.recovery;
  }
  append: EventLog['append'] = (events) => this.inner.append(events);
  get: EventLog['get'] = (id) => this.inner.get(id);
  positionOf: EventLog['positionOf'] = (id) => this.inner.positionOf(id);
  readRange: EventLog['readRange'] = async (from, to) => {
    await this.readGate?.();
    return this.inner.readRange(from, to);
  };
  readLines: EventLog['readLines'] = async (from, to) => {
    await this.readGate?.();
    return this.inner.readLines(from, to);
  };
  search: EventLog['search'] = (query) => this.inner.search(query);
  count: EventLog['count'] = (filter) => this.inner.count(filter);
  exportLines: EventLog['exportLines'] = () => this.inner.exportLines();
  onAppend: EventLog['onAppend'] = (listener) => {
    this.listeners++;
    const unsubscribe = this.inner.onAppend(listener);
    let subscribed = true;
    return () => {
      if (subscribed) this.listeners--;
      subscribed = false;
      unsubscribe();
    };
  };
  close: EventLog['close'] = () => this.inner.close();

  async ids(): Promise<string[]> {
    return (await this.inner.readRange(0, this.inner.size)).map((event) => event.id);
  }
}

/** The conversation service as the stream sees it, over real logs in a temp dir. */
export class FakeSource implements EventStreamSource {
  readonly logs = new Map<string, ObservedEventLog>();
  readonly messages: unknown[] = [];
  /** Awaited by fullState, when set. */
  fullStateGate: Promise<void> | undefined;
  failFullState = false;

  async eventLog(conversationId: string): Promise<EventLog | undefined> {
    return this.logs.get(conversationId);
  }
  async fullState(conversationId: string): Promise<unknown> {
    await this.fullStateGate;
    if (this.failFullState) throw new Error('state unavailable');
    return { id: conversationId, execution_status: 'idle' };
  }
  async sendMessage(_conversationId: string, message: unknown): Promise<void> {
    if (typeof message === 'object' && message !== null && 'refuse' in message) throw new Error('refused');
    this.messages.push(message);
  }
  readonly live = new LiveFrames();
  onLiveFrame(conversationId: string, listener: (frame: object) => void): () => void {
    return this.live.subscribe(conversationId, listener);
  }
}

export interface StreamServer {
  source: FakeSource;
  url(conversationId: string, query?: Record<string, string>): string;
  /** A client of this server; `stop` cuts off any still connected. */
  connect(conversationId: string, query?: Record<string, string>, headers?: Record<string, string>): Promise<StreamClient>;
  /** A conversation whose log file holds `storedLines` (NDJSON text as written) before it is opened. */
  createConversation(conversationId: string, storedLines?: string[]): Promise<ObservedEventLog>;
  stop(): Promise<void>;
}

export async function startStreamServer(limits: { maxBufferedBytes?: number; slowSubscriberTimeoutMs?: number } = {}): Promise<StreamServer> {
  const dir = await mkdtemp(join(tmpdir(), 'event-stream-'));
  const source = new FakeSource();
  const app = new Hono();
  const { upgradeWebSocket, injectWebSocket } = createNodeWebSocket({ app });
  registerEventSocket(app, { upgradeWebSocket, source, isValidSessionKey: (key) => key === SESSION_KEY, ...limits });
  const server = await new Promise<ServerType>((resolve) => {
    const started = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(started));
    injectWebSocket(started);
  });
  const port = (server.address() as AddressInfo).port;
  const url = (conversationId: string, query: Record<string, string> = { session_api_key: SESSION_KEY }) =>
    `ws://127.0.0.1:${port}/sockets/events/${conversationId}?${new URLSearchParams(query)}`;
  const clients: StreamClient[] = [];
  return {
    source,
    url,
    async connect(conversationId, query, headers) {
      const client = await StreamClient.connect(url(conversationId, query), headers);
      clients.push(client);
      return client;
    },
    async createConversation(conversationId, storedLines = []) {
      const file = join(dir, `${conversationId}.ndjson`);
      if (storedLines.length > 0) await writeFile(file, storedLines.map((line) => `${line}\n`).join(''));
      const log = new ObservedEventLog(await openEventLog(file));
      source.logs.set(conversationId, log);
      return log;
    },
    async stop() {
      for (const client of clients) client.socket.terminate();
      await new Promise((resolve) => server.close(resolve));
      await Promise.all([...source.logs.values()].map((log) => log.close()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A `ws` client that records every frame it gets and how it was closed. */
export class StreamClient {
  readonly frames: StoredEvent[] = [];
  /** Each frame's text, exactly as received. */
  readonly texts: string[] = [];
  closed: { code: number; reason: string } | undefined;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.texts.push(data.toString());
      this.frames.push(JSON.parse(data.toString()) as StoredEvent);
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
    });
  }

  static connect(url: string, headers: Record<string, string> = {}): Promise<StreamClient> {
    const socket = new WebSocket(url, { headers });
    const client = new StreamClient(socket);
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(client));
      socket.once('error', reject);
    });
  }

  /** Ids of the stored events received: every frame after the full_state one. */
  get eventIds(): string[] {
    return this.frames.slice(1).map((frame) => frame.id);
  }

  async waitForClose(): Promise<{ code: number; reason: string }> {
    await waitFor(() => this.closed !== undefined, 'the socket to close');
    return this.closed!;
  }

  async waitForEvents(count: number): Promise<void> {
    await waitFor(() => this.eventIds.length >= count || this.closed !== undefined, `${count} events`);
    if (this.eventIds.length < count) throw new Error(`closed ${JSON.stringify(this.closed)} after ${this.eventIds.length} of ${count} events`);
  }

  close(): void {
    this.socket.close();
  }
}

/** Resolves once `condition` holds; checks often, gives up (failing the test) after a generous deadline. */
export async function waitFor(condition: () => boolean, what: string, deadlineMs = 20_000): Promise<void> {
  const giveUpAt = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

let serial = 0;

/** `count` distinct events, each carrying `paddingBytes` of filler. */
export function makeEvents(count: number, paddingBytes = 0): StoredEvent[] {
  return Array.from({ length: count }, () => ({
    id: `ev-${(serial++).toString().padStart(6, '0')}`,
    kind: 'PauseEvent',
    source: 'user',
    timestamp: new Date().toISOString(),
    ...(paddingBytes > 0 ? { padding: 'x'.repeat(paddingBytes) } : {}),
  }));
}
