import { connect, type Socket } from 'node:net';
import type { WSContext, WSEvents } from 'hono/ws';
import type { WebSocket } from 'ws';
import type { LoopbackAddress } from './listening-address.js';

/** Close code when the app's side of the tunnel fails (RFC 6455: 1011, an unexpected condition). */
const APP_FAILED = 1011;

/**
 * One TCP connection to `address`:`port` carried over a WebSocket: each binary frame from the
 * client is written to the connection, each chunk read from it goes back as a binary frame, and an
 * end on either side ends the other. The socket is paused while the client's buffer is full, so a
 * fast app cannot fill the agent-server's memory with what a slow client has not taken.
 */
export function tunnelToPort(address: LoopbackAddress, port: number): WSEvents<WebSocket> {
  let socket: Socket | undefined;
  let clientClosed = false;
  return {
    onOpen(_event, client: WSContext<WebSocket>) {
      socket = connect({ host: address, port });
      const raw = client.raw;
      socket.on('data', (chunk) => {
        if (!raw || raw.readyState !== 1) return;
        raw.send(chunk, { binary: true });
        if (raw.bufferedAmount > 1 << 20) {
          socket?.pause();
          const resume = () => (raw.bufferedAmount > 1 << 18 ? setTimeout(resume, 5) : socket?.resume());
          setTimeout(resume, 5);
        }
      });
      socket.on('end', () => {
        if (!clientClosed) client.close(1000, 'connection closed by the app');
      });
      socket.on('error', (err) => {
        if (!clientClosed) client.close(APP_FAILED, err.message.slice(0, 120));
      });
    },
    onMessage(event) {
      const data = event.data;
      const chunk = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data as ArrayBuffer);
      socket?.write(chunk);
    },
    onClose() {
      clientClosed = true;
      socket?.end();
    },
  };
}
