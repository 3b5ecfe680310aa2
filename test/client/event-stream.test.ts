import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { followEvents } from '../../src/client/event-stream.js';
import { Transport } from '../../src/client/transport.js';

describe('followEvents', () => {
  it('resumes after the last stored event, not after a live delta or the state snapshot', async () => {
    const resumedAfter: (string | null)[] = [];
    const http = createServer();
    const sockets = new WebSocketServer({ server: http });
    sockets.on('connection', (socket, request) => {
      resumedAfter.push(new URL(request.url ?? '/', 'http://x').searchParams.get('after_event_id'));
      if (resumedAfter.length === 1) {
        socket.send(JSON.stringify({ kind: 'ConversationStateUpdateEvent', id: 'state-1', key: 'full_state', value: {} }));
        socket.send(JSON.stringify({ kind: 'MessageEvent', id: 'stored-1' }));
        socket.send(JSON.stringify({ kind: 'StreamingDeltaEvent', id: 'delta-1', content: 'par' }));
        // Dropped, as a flaky network would: the client reconnects.
        socket.terminate();
      } else {
        socket.send(JSON.stringify({ kind: 'MessageEvent', id: 'stored-2' }));
      }
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const { port } = http.address() as { port: number };
    const stop = new AbortController();
    const kinds: string[] = [];
    try {
      for await (const event of followEvents(new Transport({ baseUrl: `http://127.0.0.1:${port}` }), 'c1', { signal: stop.signal })) {
        kinds.push(event.id ?? '');
        if (event.id === 'stored-2') stop.abort();
      }
    } finally {
      sockets.close();
      http.close();
    }
    expect(kinds).toEqual(['state-1', 'stored-1', 'delta-1', 'stored-2']);
    expect(resumedAfter).toEqual([null, 'stored-1']);
  });
});
