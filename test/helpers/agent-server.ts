import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { afterEach, beforeEach } from 'vitest';
import type { z } from 'zod';
import { createAgentServerApp, type AgentServer, type AgentServerOptions } from '../../src/agent-server/app.js';
import { ConversationInfoSchema, type ConversationInfo } from '../../src/contracts/agent-server/conversation-info.js';
import { readAnswer, type Answer } from './answer.js';
import { makeTempDir, removeDir } from './temp-dir.js';

export const SESSION_KEY_HEADER = 'X-Session-API-Key';

export interface CallOptions {
  /** Sent as JSON with content-type application/json. */
  json?: unknown;
  /** Sent as is (a stream arrives in its pieces); set the content-type in `headers`. */
  body?: string | ReadableStream<Uint8Array>;
  headers?: Record<string, string>;
}

/** How a test's agent-server is configured: as the real one, over the data directory it is given. */
export type TestAgentServerOptions = Partial<Omit<AgentServerOptions, 'dataDir'>>;

/**
 * An agent-server app over a data directory, driven through `app.request()` (no port), with the
 * first session key (if any) on every call. `reopen()` closes it and opens a new one over the same
 * directory, as a restart would.
 */
export class TestAgentServer {
  private constructor(
    readonly server: AgentServer,
    readonly dataDir: string,
    private readonly options: TestAgentServerOptions,
    private readonly defaultHeaders: Record<string, string>,
  ) {}

  static async open(dataDir: string, options: TestAgentServerOptions = {}): Promise<TestAgentServer> {
    const sessionKeys = options.sessionKeys ?? [];
    const server = await createAgentServerApp({ ...options, dataDir, sessionKeys });
    const headers: Record<string, string> = sessionKeys[0] ? { [SESSION_KEY_HEADER]: sessionKeys[0] } : {};
    return new TestAgentServer(server, dataDir, options, headers);
  }

  async call(method: string, path: string, options: CallOptions = {}): Promise<Response> {
    const headers = { ...this.defaultHeaders, ...options.headers };
    let body = options.body;
    if (options.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(options.json);
    }
    // A stream body needs half duplex, as fetch() would be told.
    return this.server.app.request(path, { method, headers, body, ...(typeof body === 'string' || body === undefined ? {} : { duplex: 'half' }) } as RequestInit);
  }

  /** Calls and returns the status with the JSON body, checked against `schema` (see readAnswer). */
  async callJson<S extends z.ZodType = z.ZodUnknown>(method: string, path: string, options: CallOptions = {}, schema?: S): Promise<Answer<z.output<S>>> {
    return readAnswer(await this.call(method, path, options), schema);
  }

  async createConversation(overrides: Record<string, unknown> = {}): Promise<ConversationInfo> {
    const response = await this.call('POST', '/api/conversations', { json: startRequest(overrides) });
    if (response.status !== 201) throw new Error(`creating a conversation answered ${response.status}: ${await response.text()}`);
    return ConversationInfoSchema.parse(await response.json());
  }

  async reopen(): Promise<TestAgentServer> {
    await this.close();
    return TestAgentServer.open(this.dataDir, this.options);
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

export interface AgentServerFixture {
  /** The running test's server; `reopen()` replaces it. */
  readonly server: TestAgentServer;
  readonly dataDir: string;
  /** Closes the server, runs `whileClosed` (to change its files as a crash would), and opens a new one over the same directory. */
  reopen(whileClosed?: () => Promise<void>): Promise<TestAgentServer>;
}

/**
 * The agent-server every route test starts from: a TestAgentServer over a fresh data directory
 * before each test, closed and removed after it. Call once at the top of a file or describe.
 */
export function useTestAgentServer(options: TestAgentServerOptions & { tempPrefix?: string } = {}): AgentServerFixture {
  const { tempPrefix, ...serverOptions } = options;
  let current: TestAgentServer | undefined;
  beforeEach(async () => {
    current = await TestAgentServer.open(await makeTempDir(tempPrefix), serverOptions);
  });
  afterEach(async () => {
    const server = current;
    current = undefined;
    if (!server) return;
    await server.close();
    await removeDir(server.dataDir);
  });
  function running(): TestAgentServer {
    if (!current) throw new Error('the agent-server fixture is only there while a test runs');
    return current;
  }
  return {
    get server() {
      return running();
    },
    get dataDir() {
      return running().dataDir;
    },
    async reopen(whileClosed) {
      const server = running();
      await server.close();
      await whileClosed?.();
      current = await TestAgentServer.open(server.dataDir, serverOptions);
      return current;
    },
  };
}

export const PARITY_KEY = 'parity-session-key-0123456789';

/** An agent-server on a real port (WebSockets included), as clients and the published client reach it. */
export interface ListeningAgentServer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** ws://127.0.0.1:<port> */
  wsUrl: string;
  key: string;
  server: AgentServer;
  /** The temporary directory holding `data/` and `workspace/`, removed by close(). */
  root: string;
  /** Where /api/bash commands run: `<root>/workspace`. */
  workspaceDir: string;
  /** Sends a JSON request with the session key; the body checked against `schema` (see readAnswer). */
  call<S extends z.ZodType = z.ZodUnknown>(method: string, path: string, body?: unknown, schema?: S): Promise<Answer<z.output<S>>>;
  /** Stops serving, closes the agent-server and removes its directory. */
  close(): Promise<void>;
}

/** The agent-server on a real port with one session key, over a new temporary directory. */
export async function startListeningAgentServer(): Promise<ListeningAgentServer> {
  const root = await makeTempDir();
  const workspaceDir = join(root, 'workspace');
  await mkdir(workspaceDir, { recursive: true });
  const server = await createAgentServerApp({ dataDir: join(root, 'data'), sessionKeys: [PARITY_KEY], workspaceDir });
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
    root,
    workspaceDir,
    async call(method, path, body, schema) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { 'x-session-api-key': PARITY_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return readAnswer(response, schema);
    },
    async close() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      await server.close();
      await removeDir(root);
    },
  };
}

/** A minimal valid StartConversationRequest, with fields replaced by `overrides`. */
export function startRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    agent: { kind: 'Agent', llm: { model: 'test-model', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-secret' } },
    workspace: { working_dir: '/workspace' },
    ...overrides,
  };
}

/** The body of POST .../events for a user text message. */
export function textMessage(text: string, role = 'user'): Record<string, unknown> {
  return { role, content: [{ type: 'text', text }] };
}
