import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import { nowTimestamp } from '../../events/index.js';

/**
 * Tells a socket's client that a frame it sent was refused (OpenHands' ServerErrorEvent, or
 * BashError on the bash stream). Only sent, never stored: it is about the frame, not the
 * conversation. The socket stays open.
 */
export function sendErrorEvent(
  socket: WebSocket | undefined,
  code: string,
  detail: string,
  kind: 'ServerErrorEvent' | 'BashError' = 'ServerErrorEvent',
): void {
  if (!socket || socket.readyState !== socket.OPEN) return;
  socket.send(JSON.stringify({ kind, id: randomUUID(), timestamp: nowTimestamp(), source: 'environment', code, detail }));
}
