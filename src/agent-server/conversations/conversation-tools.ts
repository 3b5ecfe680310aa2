import type { AgentUser } from '../agent-user.js';
import { ConversationErrorEventSchema, type Event } from '../../events/index.js';
import {
  closeTools,
  connectMcpTools,
  conversationToolSet,
  createConversationTools,
  type McpTools,
  type ToolChoice,
  type ToolEnvironment,
  type ToolSet,
} from '../agent/tools/index.js';
import type { EventLog } from '../store/index.js';

/**
 * The tools of a conversation's agent: those its `agent` settings choose, and the tools of the MCP
 * servers of its `mcp_config`. A server that fails to start is reported in the conversation as a
 * ConversationErrorEvent (code MCPError, or MCPTimeoutError when it did not answer in time), for
 * the client to show; the agent goes on with every other tool.
 */
export async function openConversationTools(
  agent: ToolChoice & { mcp_config?: unknown },
  log: EventLog<Event>,
  env: ToolEnvironment & { agentUser?: AgentUser },
): Promise<ToolSet> {
  const made = await createConversationTools(agent, env);
  let mcp: McpTools | null = null;
  try {
    mcp = hasServers(agent.mcp_config)
      ? await connectMcpTools(agent.mcp_config, { workspaceDir: env.workspaceDir, agentUser: env.agentUser, reservedNames: new Set(made.map((tool) => tool.name)) })
      : null;
    const reports = (mcp?.failures ?? []).map((failure) =>
      ConversationErrorEventSchema.parse({ kind: 'ConversationErrorEvent', source: 'environment', code: failure.name, detail: failure.message }),
    );
    if (reports.length > 0) await log.append(reports);
    return conversationToolSet(made, mcp, agent.filter_tools_regex);
  } catch (error) {
    await Promise.all([closeTools(made), mcp?.close()]);
    throw error;
  }
}

function hasServers(config: unknown): boolean {
  if (typeof config !== 'object' || config === null || !('mcpServers' in config)) return false;
  const servers = config.mcpServers;
  return typeof servers === 'object' && servers !== null && Object.keys(servers).length > 0;
}
