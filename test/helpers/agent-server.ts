import { afterEach, beforeEach } from 'vitest';
import { createAgentServerApp, type AgentServer } from '../../src/agent-server/app.js';
import type { ConversationInfo } from '../../src/contracts/agent-server/conversation-info.js';
import { makeTempDir, removeDir } from './temp-dir.js';

export const SESSION_KEY_HEADER = 'X-Session-API-Key';

export interface CallOptions {
  /** Sent as JSON with content-type application/json. */
  json?: unknown;
  /** Sent as is (a stream arrives in its pieces); set the content-type in `headers`. */
  body?: string | ReadableStream<Uint8Array>;
  headers?: Record<string, string>;
}

/**
 * An agent-server app over a data directory, driven through `app.request()` (no port). `reopen()`
 * closes it and opens a new one over the same directory, as a restart would.
 */
export class TestAgentServer {
  private constructor(
    readonly server: AgentServer,
    readonly dataDir: string,
    private readonly sessionKeys: readonly string[],
    private readonly defaultHeaders: Record<string, string>,
  ) {}

  static async open(dataDir: string, options: { sessionKeys?: readonly string[] } = {}): Promise<TestAgentServer> {
    const sessionKeys = options.sessionKeys ?? [];
    const server = await createAgentServerApp({ dataDir, sessionKeys });
    const headers: Record<string, string> = sessionKeys[0] ? { [SESSION_KEY_HEADER]: sessionKeys[0] } : {};
    return new TestAgentServer(server, dataDir, sessionKeys, headers);
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

  /** Calls and returns the status with the parsed JSON body. */
  async callJson(method: string, path: string, options: CallOptions = {}): Promise<{ status: number; body: any }> {
    const response = await this.call(method, path, options);
    return { status: response.status, body: await response.json() };
  }

  async createConversation(overrides: Record<string, unknown> = {}): Promise<ConversationInfo> {
    const { status, body } = await this.callJson('POST', '/api/conversations', { json: startRequest(overrides) });
    if (status !== 201) throw new Error(`creating a conversation answered ${status}: ${JSON.stringify(body)}`);
    return body as ConversationInfo;
  }

  async reopen(): Promise<TestAgentServer> {
    await this.close();
    return TestAgentServer.open(this.dataDir, { sessionKeys: this.sessionKeys });
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
export function useTestAgentServer(options: { tempPrefix?: string } = {}): AgentServerFixture {
  let current: TestAgentServer | undefined;
  beforeEach(async () => {
    current = await TestAgentServer.open(await makeTempDir(options.tempPrefix));
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
      current = await TestAgentServer.open(server.dataDir);
      return current;
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
