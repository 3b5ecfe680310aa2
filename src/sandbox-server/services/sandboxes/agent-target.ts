import { AGENT_SERVER_PORT_NAME } from '../../../contracts/sandbox.js';
import type { SandboxRow } from '../../db/schema.js';
import { type AgentServerTarget, agentServerTarget } from '../../proxy/forward-http.js';

/** The agent-server of a RUNNING sandbox, or null when it has none to talk to yet. */
export function agentTargetOf(row: SandboxRow): AgentServerTarget | null {
  return row.status === 'RUNNING' ? publishedTargetOf(row) : null;
}

/**
 * The agent-server of a sandbox still STARTING (and wanted RUNNING) whose container is up with its
 * port published, or null: it may answer before the reconciler has seen it answer.
 */
export function startingAgentTargetOf(row: SandboxRow): AgentServerTarget | null {
  return row.status === 'STARTING' && row.desiredState === 'RUNNING' ? publishedTargetOf(row) : null;
}

/** Where the sandbox's container publishes its agent-server, whatever its status; null when it does not. */
function publishedTargetOf(row: SandboxRow): AgentServerTarget | null {
  const port = row.hostPorts?.[AGENT_SERVER_PORT_NAME];
  if (port === undefined || row.hostAddress === null) return null;
  return agentServerTarget(row.hostAddress, port, row.sessionApiKey);
}
