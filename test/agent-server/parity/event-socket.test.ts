/**
 * The conversation event stream as OpenHands' current agent-server serves it: resend_mode (all,
 * since with after_timestamp) winning over resend_all, first-message auth, error events for bad
 * frames; and the module-qualified kind filter of search and count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MessageEventSchema } from '../../../src/events/index.js';
import { startListeningAgentServer, type ListeningAgentServer } from '../../helpers/agent-server.js';

const MESSAGE_CLASS = 'openhands.sdk.event.llm_convertible.message.MessageEvent';

let agent: ListeningAgentServer;
let conversationId: string;
let secondMessageTimestamp: string;

interface Client {
  /** Each frame as sent: an event, or a ServerErrorEvent about a frame the client sent. */
  frames: Record<string, unknown>[];
  closed?: { code: number; reason: string };
  socket: WebSocket;
}

function open(query: string, headers: Record<string, string> = {}): Promise<Client> {
  const socket = new WebSocket(`${agent.wsUrl}/sockets/events/${conversationId}?${query}`, { headers });
  const client: Client = { frames: [], socket };
  socket.on('message', (data) => client.frames.push(JSON.parse(data.toString())));
  socket.on('close', (code, reason) => (client.closed = { code, reason: reason.toString() }));
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(client));
    socket.once('error', reject);
  });
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${agent.url}${path}`, {
    method: 'POST',
    headers: { 'x-session-api-key': agent.key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The text of each MessageEvent received, the frame checked against the event model. */
const texts = (client: Client) =>
  client.frames
    .filter((frame) => frame.kind === 'MessageEvent')
    .map((frame) => {
      const [first] = MessageEventSchema.parse(frame).llm_message.content;
      return first?.type === 'text' ? first.text : undefined;
    });

beforeAll(async () => {
  agent = await startListeningAgentServer();
  const created = await post('/api/conversations', {
    agent: { kind: 'Agent', llm: { model: 'scripted', base_url: 'http://127.0.0.1:9/v1' } },
    workspace: { working_dir: agent.workspaceDir },
  });
  conversationId = ((await created.json()) as { id: string }).id;
  await post(`/api/conversations/${conversationId}/events`, { role: 'user', content: [{ type: 'text', text: 'first' }] });
  await new Promise((resolve) => setTimeout(resolve, 20));
  await post(`/api/conversations/${conversationId}/events`, { role: 'user', content: [{ type: 'text', text: 'second' }] });
  const page = await fetch(`${agent.url}/api/conversations/${conversationId}/events/search?sort_order=TIMESTAMP_DESC&limit=1`, {
    headers: { 'x-session-api-key': agent.key },
  });
  secondMessageTimestamp = ((await page.json()) as { items: { timestamp: string }[] }).items[0]!.timestamp;
});
afterAll(async () => {
  await agent.close();
});

describe('resend_mode', () => {
  it('replays everything with all, from a time with since, and wins over resend_all', async () => {
    const all = await open(`session_api_key=${agent.key}&resend_mode=all`);
    await until(() => texts(all).length === 2, 'both messages');
    expect(texts(all)).toEqual(['first', 'second']);

    const since = await open(`session_api_key=${agent.key}&resend_mode=since&after_timestamp=${encodeURIComponent(secondMessageTimestamp)}&resend_all=true`);
    await until(() => since.frames.length >= 2, 'the replay');
    expect(texts(since)).toEqual(['second']);

    const noTimestamp = await open(`session_api_key=${agent.key}&resend_mode=since&resend_all=true`);
    await until(() => noTimestamp.frames.length >= 1, 'the full state');
    await post(`/api/conversations/${conversationId}/events`, { role: 'user', content: [{ type: 'text', text: 'third' }] });
    await until(() => texts(noTimestamp).length === 1, 'the live message');
    expect(texts(noTimestamp)).toEqual(['third']);

    const bad = await open(`session_api_key=${agent.key}&resend_mode=sometimes`);
    await until(() => bad.closed !== undefined, 'the refusal');
    expect(bad.closed!.code).toBe(4400);
    for (const client of [all, since, noTimestamp]) client.socket.close();
  });
});

describe('first-message auth', () => {
  it('streams once the first frame carries a valid key, and closes 4001 on a wrong one', async () => {
    const good = await open('resend_mode=all');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(good.frames).toEqual([]);
    good.socket.send(JSON.stringify({ type: 'auth', session_api_key: agent.key }));
    await until(() => texts(good).length >= 2, 'the replay after auth');
    expect(good.frames[0]).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'full_state' });
    good.socket.send(JSON.stringify({ type: 'auth', session_api_key: agent.key }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(good.frames.some((frame) => frame.kind === 'ServerErrorEvent')).toBe(false);
    good.socket.close();

    const wrong = await open('resend_mode=all');
    wrong.socket.send(JSON.stringify({ type: 'auth', session_api_key: 'wrong' }));
    await until(() => wrong.closed !== undefined, 'the refusal');
    expect(wrong.closed).toEqual({ code: 4001, reason: 'Authentication failed' });
    expect(wrong.frames).toEqual([]);

    const notAuth = await open('');
    notAuth.socket.send(JSON.stringify({ role: 'user', content: [] }));
    await until(() => notAuth.closed !== undefined, 'the refusal');
    expect(notAuth.closed!.code).toBe(4001);
  });
});

describe('bad frames', () => {
  it('answers a frame that is not a message with an error event and keeps the socket open', async () => {
    const client = await open(`session_api_key=${agent.key}`);
    await until(() => client.frames.length >= 1, 'the full state');
    client.socket.send('{ not json');
    client.socket.send(JSON.stringify({ role: 'robot' }));
    await until(() => client.frames.filter((frame) => frame.kind === 'ServerErrorEvent').length === 2, 'two error events');
    const errors = client.frames.filter((frame) => frame.kind === 'ServerErrorEvent');
    expect(errors[0]).toMatchObject({ source: 'environment', code: 'JSONDecodeError' });
    expect(errors[1]).toMatchObject({ source: 'environment', code: 'RequestValidationError' });
    client.socket.send(JSON.stringify({ role: 'user', content: [{ type: 'text', text: 'after the errors' }], run: false }));
    await until(() => texts(client).includes('after the errors'), 'the good message');
    expect(client.closed).toBeUndefined();
    client.socket.close();
  });
});

describe('module-qualified kind filter', () => {
  it('matches the Python class path in search and count, like the kind name', async () => {
    const get = async (path: string) =>
      (await fetch(`${agent.url}/api/conversations/${conversationId}/events/${path}`, { headers: { 'x-session-api-key': agent.key } })).json();
    const byName = (await get('search?kind=MessageEvent')) as { items: { id: string }[] };
    const byClass = (await get(`search?kind=${MESSAGE_CLASS}`)) as { items: { id: string }[] };
    expect(byClass.items.map((event) => event.id)).toEqual(byName.items.map((event) => event.id));
    expect(byName.items.length).toBeGreaterThanOrEqual(2);
    expect(await get(`count?kind=${MESSAGE_CLASS}`)).toBe(byName.items.length);
    expect(await get('count?kind=openhands.sdk.event.NoSuchEvent')).toBe(0);
  });
});
