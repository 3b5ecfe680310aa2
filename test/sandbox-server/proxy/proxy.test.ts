import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { createNodeWebSocket } from '@hono/node-ws';
import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { handleError } from '../../../src/http/errors.js';
import { agentServerTarget } from '../../../src/sandbox-server/agent-client.js';
import { bridgeWebSocket, forwardHttp } from '../../../src/sandbox-server/proxy/index.js';

const KEY = 'sandbox-key';

/** Stands in for a sandbox's agent-server: echoes what it received, streams, speaks WebSocket. */
function startUpstream() {
  const app = new Hono();
  const { upgradeWebSocket, injectWebSocket } = createNodeWebSocket({ app });
  let releaseStream: () => void = () => {};
  app.get(
    '/ws',
    upgradeWebSocket((c) => {
      if (c.req.query('session_api_key') !== KEY) return { onOpen: (_e, ws) => ws.close(4001, 'bad key') };
      return {
        onMessage: (event, ws) => ws.send(`echo:${String(event.data)}`),
        onOpen: (_e, ws) => ws.send('hello'),
      };
    }),
  );
  app.get('/closes', upgradeWebSocket(() => ({ onOpen: (_e, ws) => ws.close(4004, 'Conversation not found') })));
  app.get('/slow-stream', (c) =>
    stream(c, async (s) => {
      await s.write('first\n');
      await new Promise<void>((resolve) => {
        releaseStream = resolve;
      });
      await s.write('second\n');
    }),
  );
  app.all('/echo/*', async (c) =>
    c.json({
      method: c.req.method,
      path: c.req.path,
      query: c.req.query(),
      key: c.req.header('x-session-api-key') ?? null,
      authorization: c.req.header('authorization') ?? null,
      custom: c.req.header('x-custom') ?? null,
      body: await c.req.text(),
    }, 201, { 'x-upstream': 'yes' }),
  );
  return listen(app, injectWebSocket).then((server) => ({ server, release: () => releaseStream() }));
}

function listen(app: Hono, inject: (server: ServerType) => void): Promise<ServerType> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(server));
    inject(server);
  });
}

function startProxy(upstreamPort: number) {
  const app = new Hono();
  app.onError(handleError);
  const { upgradeWebSocket, injectWebSocket } = createNodeWebSocket({ app });
  app.all('/agent/*', async (c) => {
    const path = c.req.path.slice('/agent'.length);
    const target = agentServerTarget('127.0.0.1', upstreamPort, KEY);
    if (c.req.header('upgrade')?.toLowerCase() === 'websocket') {
      const url = `${target.baseUrl.replace(/^http/, 'ws')}${path}?session_api_key=${KEY}`;
      return upgradeWebSocket(c, bridgeWebSocket(url));
    }
    return forwardHttp(c.req.raw, target, path, new URL(c.req.url).search);
  });
  return listen(app, injectWebSocket);
}

const portOf = (server: ServerType) => (server.address() as AddressInfo).port;
const close = (server: ServerType) => new Promise((resolve) => server.close(resolve));

function nextMessage(ws: WebSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    ws.once('message', (data) => resolve(data.toString()));
    ws.once('close', (code) => reject(new Error(`closed ${code}`)));
  });
}

describe('agent-server proxy', () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let proxy: ServerType;
  let base: string;

  beforeAll(async () => {
    upstream = await startUpstream();
    proxy = await startProxy(portOf(upstream.server));
    base = `http://127.0.0.1:${portOf(proxy)}`;
  });
  afterAll(async () => {
    await close(proxy);
    await close(upstream.server);
  });

  it('forwards method, path, query, body and headers, adding the session key and dropping our credential', async () => {
    const res = await fetch(`${base}/agent/echo/a/b?x=1&y=two`, {
      method: 'POST',
      headers: { authorization: 'Bearer control-plane-key', 'x-custom': 'kept', 'content-type': 'text/plain' },
      body: 'payload',
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-upstream')).toBe('yes');
    expect(await res.json()).toEqual({
      method: 'POST',
      path: '/echo/a/b',
      query: { x: '1', y: 'two' },
      key: KEY,
      authorization: null,
      custom: 'kept',
      body: 'payload',
    });
  });

  it('streams the answer without waiting for its end', async () => {
    const res = await fetch(`${base}/agent/slow-stream`);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('first\n');
    upstream.release();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
    expect(rest).toBe('second\n');
  });

  it('answers 502 with a detail when the agent-server cannot be reached', async () => {
    const res = await forwardHttp(new Request('http://x/any'), agentServerTarget('127.0.0.1', 1, KEY), '/alive', '').catch(
      (err: Error) => err,
    );
    expect(res).toMatchObject({ code: 'upstream' });
    expect((res as Error).message).toMatch(/^Agent server unreachable/);
  });

  it('bridges WebSocket frames both ways', async () => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/agent/ws`);
    expect(await nextMessage(ws)).toBe('hello');
    ws.send('ping');
    expect(await nextMessage(ws)).toBe('echo:ping');
    ws.close();
  });

  it('passes the upstream close code to the client', async () => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/agent/closes`);
    const [code, reason] = await new Promise<[number, string]>((resolve) => ws.on('close', (c, r) => resolve([c, r.toString()])));
    expect(code).toBe(4004);
    expect(reason).toBe('Conversation not found');
  });
});
