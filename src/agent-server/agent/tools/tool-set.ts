/**
 * The tools a conversation's agent holds, as they stand now. Most are fixed when the conversation's
 * runner is made; an MCP server may add or remove some of its own while the conversation runs,
 * and the next LLM call is offered the new list. As in OpenHands, MCP tools come after the chosen
 * tools and before the built-ins (finish, think), and `filter_tools_regex` applies to them too.
 */
import { catalogEntry } from './catalog.js';
import { closeTools } from './conversation-tools.js';
import type { McpTools } from './mcp/mcp-tools.js';
import { compileToolFilter } from './tool-filter.js';
import type { AnyTool } from './tool.js';

export interface ToolSet {
  /** The tools now, in the order the LLM sees them; a new array whenever they change. */
  readonly tools: readonly AnyTool[];
  /** The tool the LLM calls by this name now. */
  get(name: string): AnyTool | undefined;
  /** Closes every tool and MCP server. */
  close(): Promise<void>;
}

/** A set that never changes. */
export function fixedToolSet(tools: AnyTool[]): ToolSet {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  return { tools, get: (name) => byName.get(name), close: () => closeTools(tools) };
}

/**
 * `made` (createConversationTools' tools, built-ins last) with the MCP servers' tools that
 * `filterRegex` keeps put in before the built-ins, kept current as the servers change theirs.
 */
export function conversationToolSet(made: AnyTool[], mcp: McpTools | null, filterRegex?: string | null): ToolSet {
  const filter = filterRegex ? compileToolFilter(filterRegex) : null;
  const keep = (tool: AnyTool) => !filter || !filter.ok || filter.test(tool.name);
  const builtIns = made.filter((tool) => catalogEntry(tool.name)?.builtIn);
  const chosen = made.filter((tool) => !builtIns.includes(tool));
  let tools: AnyTool[] = [];
  let byName = new Map<string, AnyTool>();
  const compose = () => {
    tools = [...chosen, ...(mcp?.tools ?? []).filter(keep), ...builtIns];
    byName = new Map(tools.map((tool) => [tool.name, tool]));
  };
  compose();
  mcp?.onChange(compose);
  return {
    get tools() {
      return tools;
    },
    get: (name) => byName.get(name),
    close: async () => {
      await Promise.all([closeTools(made), mcp?.close()]);
    },
  };
}
