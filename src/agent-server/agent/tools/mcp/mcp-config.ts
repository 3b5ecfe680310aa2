/**
 * The servers of a conversation's `agent.mcp_config` (its schema is the contract's), each with the
 * transport it is spoken to over and its timeouts.
 */
import { z } from 'zod';
import { McpConfigSchema, type McpServerSettings } from '../../../../contracts/agent-server/mcp-config.js';

/** OpenHands' default for one MCP tool call. */
export const MCP_CALL_TIMEOUT_SECONDS = 300;
/** OpenHands' default for connecting to a server and listing its tools. */
export const MCP_CONNECT_TIMEOUT_SECONDS = 30;

/** One server, ready to connect to. */
export type McpServerSpec = {
  name: string;
  /** Seconds connecting and listing the tools may take. */
  connectTimeoutSeconds: number;
  /** Seconds one tool call may take. */
  callTimeoutSeconds: number;
} & (
  | { transport: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd: string | null }
  | { transport: 'sse' | 'http'; url: string; headers: Record<string, string> }
);

/** The servers of `config`, in the order given; throws when it is not one (a conversation stored before it was checked). */
export function mcpServersOf(config: unknown): McpServerSpec[] {
  const parsed = McpConfigSchema.safeParse(config);
  if (!parsed.success) throw new Error(`mcp_config cannot be used:\n${z.prettifyError(parsed.error)}`);
  return Object.entries(parsed.data?.mcpServers ?? {}).map(([name, server]) => serverSpec(name, server));
}

function serverSpec(name: string, server: McpServerSettings): McpServerSpec {
  const timeouts = { connectTimeoutSeconds: server.timeout ?? MCP_CONNECT_TIMEOUT_SECONDS, callTimeoutSeconds: server.timeout ?? MCP_CALL_TIMEOUT_SECONDS };
  if (server.command) {
    return { name, ...timeouts, transport: 'stdio', command: server.command, args: server.args ?? [], env: server.env ?? {}, cwd: server.cwd ?? null };
  }
  const url = server.url ?? '';
  return { name, ...timeouts, transport: remoteTransport(url, server.transport ?? server.type), url, headers: { ...server.headers, ...authHeaders(server.auth) } };
}

/** As fastmcp infers it: named, else SSE for a path ending in /sse, else Streamable HTTP. */
function remoteTransport(url: string, named: McpServerSettings['transport']): 'sse' | 'http' {
  if (named) return named === 'sse' ? 'sse' : 'http';
  return /\/sse\/?$/.test(new URL(url).pathname) ? 'sse' : 'http';
}

function authHeaders(auth: McpServerSettings['auth']): Record<string, string> {
  if (!auth) return {};
  if (typeof auth === 'string') return { Authorization: `Bearer ${auth}` };
  switch (auth.strategy) {
    case 'bearer':
      return auth.value ? { Authorization: `Bearer ${auth.value}` } : {};
    case 'api_key':
      if (!auth.value) return {};
      return auth.header_name ? { [auth.header_name]: auth.value } : { Authorization: `Bearer ${auth.value}` };
    case 'basic':
      return { Authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password ?? ''}`).toString('base64')}` };
    case 'header':
      return auth.headers;
    default:
      return {};
  }
}
