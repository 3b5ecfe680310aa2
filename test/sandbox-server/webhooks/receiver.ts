import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  headers: IncomingMessage['headers'];
  body: string;
}

/** How the receiver answers the n-th request (0-based); the default acknowledges with 200. */
export type Answer = (request: ReceivedDelivery, index: number, response: ServerResponse) => void;

/** A webhook receiver on 127.0.0.1 that records every request it gets. */
export interface Receiver {
  port: number;
  url: string;
  received: ReceivedDelivery[];
  close(): Promise<void>;
}

export async function startReceiver(answer: Answer = (_r, _i, response) => response.end('ok'), port = 0): Promise<Receiver> {
  const received: ReceivedDelivery[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const delivery = { headers: request.headers, body };
      received.push(delivery);
      answer(delivery, received.length - 1, response);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    port: actual,
    url: `http://127.0.0.1:${actual}/hooks`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port that was free a moment ago and now refuses connections: a receiver that is down. */
export async function downPort(): Promise<number> {
  const receiver = await startReceiver();
  await receiver.close();
  return receiver.port;
}

/** The README's verification, written independently of the server's code. */
export function verifySignature(secret: string, headers: IncomingMessage['headers'], body: string): boolean {
  const id = String(headers['webhook-id']);
  const timestamp = String(headers['webhook-timestamp']);
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64'));
  return String(headers['webhook-signature'])
    .split(' ')
    .some((signature) => {
      const [version, value] = signature.split(',');
      const given = Buffer.from(value ?? '');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
}
