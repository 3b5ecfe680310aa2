import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamCloseCode } from '../../../src/agent-server/stream/index.js';
import { type ObservedEventLog, SESSION_KEY, type StreamClient, type StreamServer, makeEvents, startStreamServer, waitFor } from './harness.js';

describe('GET /sockets/events/:conversation_id', () => {
  let server: StreamServer;

  beforeAll(async () => {
    server = await startStreamServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  async function conversation(history = 0): Promise<{ id: string; log: ObservedEventLog }> {
    const id = randomUUID();
    const log = await server.createConversation(id);
    if (history > 0) await log.append(makeEvents(history));
    return { id, log };
  }

  function connect(id: string, query: Record<string, string> = {}): Promise<StreamClient> {
    return server.connect(id, { session_api_key: SESSION_KEY, ...query });
  }

  it('sends full_state first, then only the events appended after the connection, in order', async () => {
    const { id, log } = await conversation(3);
    const client = await connect(id);
    await waitFor(() => client.frames.length >= 1, 'the full_state frame');
    const fresh = makeEvents(5);
    await log.append(fresh.slice(0, 2));
    await log.append(fresh.slice(2));
    await client.waitForEvents(5);

    expect(client.frames[0]).toEqual({
      kind: 'ConversationStateUpdateEvent',
      id: expect.any(String),
      timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      source: 'environment',
      key: 'full_state',
      value: { id, execution_status: 'idle' },
    });
    expect(client.eventIds).toEqual(fresh.map((event) => event.id));
    expect(client.frames[1]).toEqual(fresh[0]);
  });

  it('keeps full_state first and loses nothing appended while the state is being read', async () => {
    const { id, log } = await conversation(2);
    let release!: () => void;
    server.source.fullStateGate = new Promise((resolve) => {
      release = resolve;
    });
    try {
      const client = await connect(id);
      const early = makeEvents(4);
      await log.append(early);
      release();
      await client.waitForEvents(4);
      expect(client.frames[0]?.kind).toBe('ConversationStateUpdateEvent');
      expect(client.eventIds).toEqual(early.map((event) => event.id));
    } finally {
      server.source.fullStateGate = undefined;
    }
  });

  it('sends every subscriber each event as the very line stored in the log, not a rewrite of it', async () => {
    // Spaced and ordered as JSON.stringify would never write them: a frame made by parsing and
    // serializing again would differ from the stored line.
    const stored = makeEvents(3).map(({ id, kind, source, timestamp }) => `{ "timestamp": "${timestamp}", "id": "${id}", "source": "${source}", "kind": "${kind}" }`);
    const id = randomUUID();
    const log = await server.createConversation(id, stored);
    const subscribers = [await connect(id, { resend_all: 'true' }), await connect(id, { resend_all: 'true' })];
    const live = makeEvents(2);
    await log.append(live);
    const lines: string[] = [];
    for await (const line of log.exportLines()) lines.push(line.replace(/\n$/, ''));
    expect(lines.slice(0, 3)).toEqual(stored);
    for (const subscriber of subscribers) {
      await subscriber.waitForEvents(5);
      expect(subscriber.texts.slice(1)).toEqual(lines);
    }
  });

  it('pushes concurrent appends in append order', async () => {
    const { id, log } = await conversation();
    const client = await connect(id);
    await waitFor(() => client.frames.length >= 1, 'the full_state frame');
    await Promise.all(Array.from({ length: 20 }, (_, i) => log.append(makeEvents(1 + (i % 4)))));
    await client.waitForEvents(log.size);
    expect(client.eventIds).toEqual(await log.ids());
  });

  it('with resend_all replays the history, then live events, each once, while appends race the replay', async () => {
    const { id, log } = await conversation(1500);
    let appending = true;
    const appender = (async () => {
      while (appending) await log.append(makeEvents(3));
    })();
    const client = await connect(id, { resend_all: 'true' });
    // Keep appending until events appended after the connect have been delivered live.
    const sizeAtConnect = log.size;
    await client.waitForEvents(sizeAtConnect + 30);
    appending = false;
    await appender;
    await client.waitForEvents(log.size);
    expect(client.eventIds).toEqual(await log.ids());
  });

  it('with resend_all delivers events appended in the middle of a replay read exactly once', async () => {
    const { id, log } = await conversation(250);
    const racing = makeEvents(7);
    let raced = false;
    log.readGate = async () => {
      if (raced) return;
      raced = true;
      await log.append(racing);
    };
    try {
      const client = await connect(id, { resend_all: '1' });
      await client.waitForEvents(257);
      const ids = await log.ids();
      expect(ids.slice(-7)).toEqual(racing.map((event) => event.id));
      expect(client.eventIds).toEqual(ids);
    } finally {
      log.readGate = undefined;
    }
  });

  it('resumes after after_event_id on reconnect, losing and duplicating nothing', async () => {
    const { id, log } = await conversation(10);
    let appending = true;
    const appender = (async () => {
      while (appending) await log.append(makeEvents(2));
    })();
    const first = await connect(id, { resend_all: 'true' });
    await first.waitForEvents(40);
    first.close();
    await first.waitForClose();
    const seen = first.eventIds;
    const second = await connect(id, { after_event_id: seen.at(-1)! });
    await second.waitForEvents(20);
    appending = false;
    await appender;
    await second.waitForEvents(log.size - seen.length);
    expect([...seen, ...second.eventIds]).toEqual(await log.ids());
  });

  it('gives two subscribers every event', async () => {
    const { id, log } = await conversation(5);
    const a = await connect(id, { resend_all: 'true' });
    const b = await connect(id, { resend_all: 'true' });
    await Promise.all(Array.from({ length: 10 }, () => log.append(makeEvents(2))));
    await a.waitForEvents(log.size);
    await b.waitForEvents(log.size);
    const ids = await log.ids();
    expect(a.eventIds).toEqual(ids);
    expect(b.eventIds).toEqual(ids);
  });

  it('accepts the key in the X-Session-API-Key header', async () => {
    const { id, log } = await conversation(2);
    const client = await server.connect(id, { resend_all: 'true' }, { 'x-session-api-key': SESSION_KEY });
    await client.waitForEvents(2);
    expect(client.eventIds).toEqual(await log.ids());
  });

  it.each([
    ['a missing key', {}],
    ['a wrong key', { session_api_key: 'nope' }],
  ])('closes with 4001 on %s, sending nothing', async (_case, query) => {
    const { id } = await conversation(2);
    const client = await server.connect(id, query);
    expect(await client.waitForClose()).toEqual({ code: 4001, reason: 'Authentication failed' });
    expect(client.frames).toEqual([]);
  });

  it('closes with 4004 for an unknown conversation', async () => {
    const client = await connect(randomUUID());
    expect(await client.waitForClose()).toEqual({ code: 4004, reason: 'Conversation not found' });
    expect(client.frames).toEqual([]);
  });

  it.each([
    ['an after_event_id that is not in the log', { after_event_id: 'no-such-event' }, 'after_event_id names no event of this conversation'],
    ['resend_all that is not a boolean', { resend_all: 'maybe' }, 'resend_all must be a boolean'],
    ['both resend_all and after_event_id', { resend_all: 'true', after_event_id: 'x' }, 'pass resend_all or after_event_id, not both'],
  ])('closes with 4400 for %s', async (_case, query, reason) => {
    const { id } = await conversation(2);
    const client = await connect(id, query);
    expect(await client.waitForClose()).toEqual({ code: StreamCloseCode.badRequest, reason });
    expect(client.frames).toEqual([]);
  });

  it('closes with 1011 when the conversation state cannot be read', async () => {
    const { id, log } = await conversation(1);
    server.source.failFullState = true;
    try {
      const client = await connect(id);
      expect(await client.waitForClose()).toEqual({ code: 1011, reason: 'could not read the conversation state' });
      expect(client.frames).toEqual([]);
      expect(log.listeners).toBe(0);
    } finally {
      server.source.failFullState = false;
    }
  });

  it('hands client messages to the conversation in order, and answers bad frames with an error event', async () => {
    const { id, log } = await conversation();
    const client = await connect(id);
    await waitFor(() => client.frames.length >= 1, 'the full_state frame');
    const hello = { role: 'user', content: [{ type: 'text', text: 'hello' }], run: true };
    const again = { role: 'user', content: [{ type: 'text', text: 'again' }] };
    const before = server.source.messages.length;
    client.socket.send(JSON.stringify(hello));
    client.socket.send('not json {');
    client.socket.send(JSON.stringify({ refuse: true }));
    client.socket.send(Buffer.from([1, 2, 3]));
    client.socket.send(JSON.stringify(again));
    await waitFor(() => server.source.messages.length >= before + 2, 'two messages');
    expect(server.source.messages.slice(before)).toEqual([hello, again]);
    const errors = () => client.frames.filter((frame) => frame.kind === 'ServerErrorEvent');
    await waitFor(() => errors().length >= 3, 'three error events');
    expect(errors().map((frame) => [frame['source'], frame['code']])).toEqual([
      ['environment', 'JSONDecodeError'],
      ['environment', 'Error'],
      ['environment', 'ValueError'],
    ]);
    expect(errors()[1]).toMatchObject({ detail: 'refused', id: expect.any(String), timestamp: expect.any(String) });

    const after = makeEvents(1);
    await log.append(after);
    await waitFor(() => client.frames.some((frame) => frame.id === after[0]!.id), 'the appended event');
    expect(client.frames.filter((frame) => frame.kind !== 'ServerErrorEvent').slice(1).map((frame) => frame.id)).toEqual([after[0]!.id]);
    expect(client.closed).toBeUndefined();
  });

  it('lets go of the log when the client leaves, even before the stream started', async () => {
    const { id, log } = await conversation(1);
    const client = await connect(id);
    await waitFor(() => client.frames.length >= 1, 'the full_state frame');
    expect(log.listeners).toBe(1);
    client.close();
    await client.waitForClose();
    await waitFor(() => log.listeners === 0, 'the listener to be removed');

    let release!: () => void;
    server.source.fullStateGate = new Promise((resolve) => {
      release = resolve;
    });
    try {
      const early = await connect(id);
      early.close();
      await early.waitForClose();
      release();
      await server.source.fullState(id);
      await log.append(makeEvents(1));
      expect(log.listeners).toBe(0);
      expect(early.frames).toEqual([]);
    } finally {
      server.source.fullStateGate = undefined;
    }
  });
});

describe('subscribers slower than the log', () => {
  let server: StreamServer;

  beforeAll(async () => {
    server = await startStreamServer({ maxBufferedBytes: 64 * 1024, slowSubscriberTimeoutMs: 500 });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('a client replaying a history far larger than the buffer limit is paced, not closed', async () => {
    const id = randomUUID();
    const log = await server.createConversation(id);
    for (let i = 0; i < 10; i++) await log.append(makeEvents(8, 128 * 1024));
    const client = await server.connect(id, { session_api_key: SESSION_KEY, resend_all: 'true' });
    await client.waitForEvents(log.size);
    expect(client.eventIds).toEqual(await log.ids());
    expect(client.closed).toBeUndefined();
  });

  it('a stalled client is closed with 1013 while appends and a reading client go on, and resumes with after_event_id', async () => {
    const id = randomUUID();
    const log = await server.createConversation(id);
    const reader = await server.connect(id);
    const stalled = await server.connect(id);
    await waitFor(() => reader.frames.length >= 1 && stalled.frames.length >= 1, 'both full_state frames');
    stalled.socket.pause();

    // Every append must resolve while the stalled client's buffers fill; the loop ends once the server lets go of it.
    const maxAppends = 500;
    let appends = 0;
    while (log.listeners === 2 && appends < maxAppends) {
      await log.append(makeEvents(4, 32 * 1024));
      appends++;
    }
    expect(log.listeners).toBe(1);
    await log.append(makeEvents(4));
    await reader.waitForEvents(log.size);
    expect(reader.eventIds).toEqual(await log.ids());
    expect(reader.closed).toBeUndefined();

    stalled.socket.resume();
    expect(await stalled.waitForClose()).toEqual({ code: 1013, reason: 'subscriber too slow; reconnect with after_event_id' });
    const ids = await log.ids();
    const got = stalled.eventIds;
    expect(got).toEqual(ids.slice(0, got.length));

    const resumeFrom: Record<string, string> = got.length > 0 ? { after_event_id: got.at(-1)! } : { resend_all: 'true' };
    const resumed = await server.connect(id, { session_api_key: SESSION_KEY, ...resumeFrom });
    await resumed.waitForEvents(ids.length - got.length);
    expect([...got, ...resumed.eventIds]).toEqual(ids);
  });
});
