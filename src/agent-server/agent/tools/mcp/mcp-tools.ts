/**
 * The MCP tools of one conversation: every server of its `mcp_config` connected in parallel, their
 * tools named as OpenHands (fastmcp) names them, the bare tool name for a single server and
 * `SERVER_TOOL` for several, and kept current as servers announce changes. A server that fails
 * to start is left out and said why; so is a tool whose name another tool already has.
 */
import { logger } from '../../../../logger.js';
import type { AnyTool } from '../tool.js';
import { mcpServersOf, type McpServerSpec } from './mcp-config.js';
import { connectMcpServer, McpServerError, type McpServer, type McpServerEnvironment } from './mcp-server.js';
import { createMcpTool } from './mcp-tool.js';

export interface McpTools {
  /** The servers' tools now, in the config's order; a new array after each change. */
  readonly tools: readonly AnyTool[];
  /** Why a server or a tool was left out, one error each. */
  readonly failures: readonly McpServerError[];
  /** Hears every change of `tools` after the first listing. */
  onChange(listener: () => void): void;
  close(): Promise<void>;
}

export interface McpToolsEnvironment extends McpServerEnvironment {
  /** Names the conversation's other tools have: an MCP tool of the same name is left out. */
  reservedNames: ReadonlySet<string>;
}

/** Connects every server of `config` (validateMcpConfig accepted it); never throws for a server. */
export async function connectMcpTools(config: unknown, env: McpToolsEnvironment): Promise<McpTools> {
  let specs: McpServerSpec[] = [];
  const listeners: (() => void)[] = [];
  const failures: McpServerError[] = [];
  try {
    specs = mcpServersOf(config);
  } catch (error) {
    failures.push(new McpServerError((error as Error).message));
  }
  const servers: McpServer[] = [];
  let tools: AnyTool[] = [];

  const relist = (report: boolean) => {
    const clashes: McpServerError[] = [];
    tools = toolsOf(servers, specs.length > 1, env.reservedNames, clashes);
    if (report) failures.push(...clashes);
    else for (const clash of clashes) logger.warn({ component: 'mcp' }, clash.message);
  };
  const onToolsChanged = () => {
    relist(false);
    for (const listener of listeners) listener();
  };

  const connected = await Promise.all(
    specs.map((spec) =>
      connectMcpServer(spec, env, onToolsChanged).catch((error: unknown) =>
        error instanceof McpServerError ? error : new McpServerError(`MCP server ${spec.name} failed to start: ${String(error)}`),
      ),
    ),
  );
  for (const outcome of connected) {
    if (outcome instanceof McpServerError) failures.push(outcome);
    else servers.push(outcome);
  }
  relist(true);
  logger.info({ component: 'mcp', servers: servers.length, failed: specs.length - servers.length, tools: tools.length }, 'MCP servers connected');

  return {
    get tools() {
      return tools;
    },
    failures,
    onChange: (listener) => void listeners.push(listener),
    close: async () => {
      listeners.length = 0;
      await Promise.all(servers.map((server) => server.close()));
    },
  };
}

function toolsOf(servers: readonly McpServer[], prefixed: boolean, reserved: ReadonlySet<string>, clashes: McpServerError[]): AnyTool[] {
  const tools: AnyTool[] = [];
  const taken = new Set(reserved);
  for (const server of servers) {
    for (const mcpTool of server.tools) {
      const name = toolName(server.spec, mcpTool.name, prefixed);
      if (taken.has(name)) {
        clashes.push(new McpServerError(`MCP tool ${mcpTool.name} of server ${server.spec.name} is left out: another tool is already named ${name}`));
        continue;
      }
      taken.add(name);
      tools.push(createMcpTool(name, mcpTool, server));
    }
  }
  return tools;
}

function toolName(spec: McpServerSpec, tool: string, prefixed: boolean): string {
  return prefixed ? `${spec.name}_${tool}` : tool;
}
