import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type ConversationEvent,
  createSandboxServerClient,
  SandboxServerError,
  SandboxServerUnreachableError,
  type SandboxServerClient,
} from '../../src/client/index.js';
import type { DatabaseHandle } from '../../src/sandbox-server/db/client.js';
import { openTestDatabase } from '../helpers/database.js';
import { API_KEY, type Harness, openHarness } from '../sandbox-server/app-conversations/harness.js';

/** A TCP relay to the control plane whose connections can be cut, as a flaky network would. */
async function startRelay(targetPort: number) {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((client) => {
    connections += 1;
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    connections: () => connections,
    cutAll: () => sockets.forEach((socket) => socket.destroy()),
    close: () => {
      sockets.forEach((socket) => socket.destroy());
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const message = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] });

function messageText(event: ConversationEvent): string | undefined {
  if (event.kind !== 'MessageEvent') return undefined;
  const [first] = event.llm_message.content;
  return first?.type === 'text' ? first.text : undefined;
}

describe('sandbox-server client', () => {
  let handle: DatabaseHandle;
  let h: Harness;
  let client: SandboxServerClient;

  beforeAll(async () => {
    handle = await openTestDatabase('pglite');
    h = await openHarness(handle);
    client = createSandboxServerClient({ baseUrl: h.url, apiKey: API_KEY });
  });
  afterAll(async () => {
    await h.close();
    await handle.close();
  });

  it('answers typed results of the server', async () => {
    const { items } = await client.sandboxSpecs.search();
    expect(items.map((spec) => spec.is_default)).toEqual([true]);
    const sandbox = await client.sandboxes.start();
    expect(sandbox.status).toBe('STARTING');
    expect(await client.sandboxes.batchGet([sandbox.id, 'unknown'])).toEqual([expect.objectContaining({ id: sandbox.id }), null]);
    expect(await client.sandboxes.delete(sandbox.id)).toEqual({ success: true });
  });

  it('throws SandboxServerError with the status and detail of an error answer', async () => {
    const notFound = await client.sandboxes.pause('no-such-sandbox').catch((error: unknown) => error);
    expect(notFound).toBeInstanceOf(SandboxServerError);
    expect(notFound).toMatchObject({ status: 404, detail: 'Sandbox not found', method: 'POST', path: '/api/v1/sandboxes/no-such-sandbox/pause' });

    const invalid = await client.sandboxSpecs.create({ image: '' }).catch((error: unknown) => error);
    expect(invalid).toMatchObject({ status: 422, detail: [expect.objectContaining({ loc: ['body', 'image'] })] });

    const anonymous = createSandboxServerClient({ baseUrl: h.url });
    await expect(anonymous.sandboxes.search()).rejects.toMatchObject({ status: 401, detail: 'Not authenticated' });
  });

  it('throws SandboxServerUnreachableError when nothing answers', async () => {
    const relay = await startRelay(1);
    await relay.close();
    const offline = createSandboxServerClient({ baseUrl: `http://127.0.0.1:${relay.port}` });
    await expect(offline.sandboxes.search()).rejects.toBeInstanceOf(SandboxServerUnreachableError);
  });

  it("runs commands and moves files through the sandbox's agent-server", async () => {
    const sandbox = await client.sandboxes.start();
    const agent = client.sandboxes.agent(sandbox.id);
    const output = await agent.executeBashCommand({ command: 'printf out; printf err >&2; exit 4' });
    expect(output).toMatchObject({ kind: 'BashOutput', exit_code: 4, stdout: 'out', stderr: 'err' });

    const path = `/tmp/sandbox-client-test-${sandbox.id}/file.bin`;
    const bytes = new Uint8Array([0, 1, 2, 250, 255]);
    expect(await agent.uploadFile(path, new Blob([bytes]))).toEqual({ success: true });
    const downloaded = new Uint8Array(await new Response(await agent.downloadFile(path)).arrayBuffer());
    expect(downloaded).toEqual(bytes);
    await expect(agent.downloadFile(`${path}.missing`)).rejects.toMatchObject({ status: 404, detail: 'File not found' });
    await agent.executeBashCommand({ command: `rm -rf /tmp/sandbox-client-test-${sandbox.id}` });
  });

  it('follows events across dropped connections, each event once and in order', async () => {
    const conversation = await client.appConversations.startAndWait({ initial_message: message('first') });
    const relay = await startRelay(Number(new URL(h.url).port));
    const relayed = createSandboxServerClient({ baseUrl: `http://127.0.0.1:${relay.port}`, apiKey: API_KEY });
    const stop = new AbortController();
    const received: ConversationEvent[] = [];
    const following = (async () => {
      for await (const event of relayed.appConversations.followEvents(conversation.id, { fromStart: true, signal: stop.signal })) {
        if (event.kind === 'ConversationStateUpdateEvent' && event.key === 'full_state') continue;
        received.push(event);
      }
    })();
    const texts = () => received.map(messageText).filter((text) => text !== undefined);
    try {
      await vi.waitFor(() => expect(texts()).toEqual(['first']), { timeout: 10_000 });
      relay.cutAll();
      await client.appConversations.sendMessage(conversation.id, message('while reconnecting'));
      await vi.waitFor(() => expect(texts()).toEqual(['first', 'while reconnecting']), { timeout: 10_000 });
      relay.cutAll();
      await client.appConversations.sendMessage(conversation.id, message('after the second cut'));
      await vi.waitFor(() => expect(texts()).toEqual(['first', 'while reconnecting', 'after the second cut']), { timeout: 10_000 });
      expect(relay.connections()).toBeGreaterThanOrEqual(3);
      const ids = received.map((event) => event.id);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      stop.abort();
      await following;
      await relay.close();
    }
  });
});
