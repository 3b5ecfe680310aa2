import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { serve } from '@hono/node-server';
import { createAgentServerApp, type AgentServer } from '../../src/agent-server/app.js';

export const PARITY_KEY = 'parity-session-key-0123456789';

export interface ListeningAgentServer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** ws://127.0.0.1:<port> */
  wsUrl: string;
  key: string;
  server: AgentServer;
  /** Sends a JSON request with the session key; the body is the parsed answer, if any. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** The agent-server on a real port (WebSockets included), with one session key. */
export async function startListeningAgentServer(dataDir: string, workspaceDir: string): Promise<ListeningAgentServer> {
  const server = await createAgentServerApp({ dataDir, sessionKeys: [PARITY_KEY], workspaceDir });
  const http = await new Promise<Server>((resolve) => {
    const started = serve({ fetch: server.app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(started as Server)) as Server;
    server.injectWebSocket(started);
  });
  const { port } = http.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}`,
    key: PARITY_KEY,
    server,
    async call(method, path, body) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { 'x-session-api-key': PARITY_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: await response.json().catch(() => undefined) };
    },
    async close() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      await server.close();
    },
  };
}

/**
 * The OpenHands client's published ES module build finds its WebSocket implementation with
 * `require('ws')`, which exists for its CommonJS users but not in an ES module scope; this gives it
 * one, as those users have. Call before importing the client.
 */
export function provideRequireForOpenHandsClient(): void {
  (globalThis as { require?: NodeJS.Require }).require ??= createRequire(import.meta.url);
}
