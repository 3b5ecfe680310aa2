/**
 * One MCP server of a conversation, through the official SDK's client: connected and its tools
 * listed (every page) within a deadline, listed again whenever it sends
 * `notifications/tools/list_changed`, and called with a timeout per call; a call during which the
 * server announced a change returns once the new list is in, so the next LLM step is offered
 * what the call unlocked. A server that went away
 * (a stdio server that exited, an HTTP session lost) is connected to again once at the next call,
 * as OpenHands does, before the call is reported failed.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema, type CallToolResult, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { AgentUser } from '../../../agent-user.js';
import { logger } from '../../../../logger.js';
import type { McpServerSpec } from './mcp-config.js';
import { AgentStdioTransport } from './stdio-transport.js';

/** What a server connects with besides its settings. */
export interface McpServerEnvironment {
  /** A stdio server's working directory unless its settings name one. */
  workspaceDir: string;
  agentUser?: AgentUser;
}

export interface McpServer {
  readonly spec: McpServerSpec;
  /** Its tools as last listed. */
  readonly tools: readonly McpTool[];
  /** The tool's result; throws when the server cannot be reached, the call times out or is aborted. */
  callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** A server that could not be connected to, or answered a call with a protocol error; the message says why. */
export class McpServerError extends Error {
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
    this.name = timedOut ? 'MCPTimeoutError' : 'MCPError';
  }
}

const CLIENT_INFO = { name: 'sandbox-server-agent', version: '1.0.0' };

/**
 * Connects and lists the server's tools; `onToolsChanged` hears every later listing that changed
 * them. Throws McpServerError when the server does not start, answer or list within the deadline.
 */
export async function connectMcpServer(spec: McpServerSpec, env: McpServerEnvironment, onToolsChanged: () => void): Promise<McpServer> {
  const log = logger.child({ component: 'mcp', server: spec.name });
  let session = await openSession(spec, env);
  let tools = session.tools;
  let closed = false;
  let relisting: Promise<void> = Promise.resolve();

  const relist = async (current: Session) => {
    try {
      const listed = await listAllTools(current.client, spec.connectTimeoutSeconds * 1000);
      if (closed || current !== session) return;
      tools = listed;
      onToolsChanged();
    } catch (error) {
      log.warn({ err: error }, 'listing the tools again after tools/list_changed failed');
    }
  };
  const watch = (current: Session) => {
    current.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      relisting = relisting.then(() => relist(current));
      return relisting;
    });
  };
  watch(session);

  return {
    spec,
    get tools() {
      return tools;
    },
    async callTool(name, args, signal) {
      if (closed) throw new McpServerError(`The MCP server ${spec.name} is closed`);
      if (!session.alive()) {
        log.info('the MCP server went away; connecting again');
        await session.end().catch(() => undefined);
        session = await openSession(spec, env);
        tools = session.tools;
        watch(session);
      }
      const result = await session.client.callTool({ name, arguments: args }, undefined, {
        timeout: spec.callTimeoutSeconds * 1000,
        signal,
      });
      await relisting;
      // The SDK's type also admits the result of a pre-2024-11 server, `{toolResult}`.
      if (!('content' in result) || !Array.isArray(result.content)) {
        return { content: [{ type: 'text', text: JSON.stringify(result.toolResult ?? null) }] };
      }
      return result as CallToolResult;
    },
    async close() {
      closed = true;
      await session.end().catch((error: unknown) => log.warn({ err: error }, 'closing an MCP server failed'));
    },
  };
}

interface Session {
  client: Client;
  tools: McpTool[];
  /** False once the transport closed: the server exited or the connection dropped. */
  alive(): boolean;
  /** Ends the session: a Streamable HTTP server is told so, a stdio server is stopped. */
  end(): Promise<void>;
}

async function openSession(spec: McpServerSpec, env: McpServerEnvironment): Promise<Session> {
  const transport = transportOf(spec, env);
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  let alive = true;
  client.onclose = () => (alive = false);
  const timeoutMs = spec.connectTimeoutSeconds * 1000;
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    const tools = await untilAborted(
      (async () => {
        await client.connect(transport, { signal: deadline, timeout: timeoutMs });
        return listAllTools(client, timeoutMs, deadline);
      })(),
      deadline,
    );
    const end = async () => {
      if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined);
      await client.close();
    };
    return { client, tools, alive: () => alive, end };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw startFailure(spec, transport, error, deadline.aborted);
  }
}

async function listAllTools(client: Client, timeoutMs: number, signal?: AbortSignal): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs, signal });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

function transportOf(spec: McpServerSpec, env: McpServerEnvironment): Transport {
  switch (spec.transport) {
    case 'stdio':
      return new AgentStdioTransport({ command: spec.command, args: spec.args, env: spec.env, cwd: spec.cwd ?? env.workspaceDir, agentUser: env.agentUser });
    case 'sse':
      return new SSEClientTransport(new URL(spec.url), {
        requestInit: { headers: spec.headers },
        // The SSE stream's own GET carries the headers only through eventSourceInit.
        eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), ...spec.headers } }) },
      });
    case 'http':
      return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers } });
  }
}

/** Rejects when `signal` aborts, for steps that take no signal themselves (a transport's start). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function startFailure(spec: McpServerSpec, transport: Transport, error: unknown, timedOut: boolean): McpServerError {
  const where = spec.transport === 'stdio' ? `command ${JSON.stringify([spec.command, ...spec.args].join(' '))}` : `${spec.url} (${spec.transport === 'sse' ? 'SSE' : 'Streamable HTTP'})`;
  const why = timedOut ? `it did not answer and list its tools within ${spec.connectTimeoutSeconds} s` : messageOf(error);
  const stderr = transport instanceof AgentStdioTransport ? transport.stderrTail() : '';
  return new McpServerError(`MCP server ${spec.name} (${where}) failed to start: ${why}${stderr ? `\nIts stderr ended with:\n${stderr}` : ''}`, timedOut);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
