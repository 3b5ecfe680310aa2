/** The tools every conversation's agent gets, in the order the LLM sees them. */
import type { AgentUser } from '../../agent-user.js';
import { createFileEditorTool } from './file-editor/file-editor-tool.js';
import { createFinishTool } from './finish-tool.js';
import { createTaskTrackerTool, type TaskTrackerToolOptions } from './task-tracker-tool.js';
import { createTerminalTool, type TerminalToolOptions } from './terminal/terminal-tool.js';
import { createThinkTool } from './think-tool.js';
import type { AnyTool } from './tool.js';

export interface DefaultToolsOptions {
  workspaceDir: string;
  /** Who the agent's commands run as and owns what its editor creates; the agent-server's user when absent. */
  agentUser?: AgentUser;
  terminal?: Omit<TerminalToolOptions, 'workspaceDir'>;
  taskTracker?: TaskTrackerToolOptions;
}

export function createDefaultTools(options: DefaultToolsOptions): AnyTool[] {
  const { workspaceDir, agentUser } = options;
  return [
    createTerminalTool({ ...options.terminal, workspaceDir, agentUser }),
    createFileEditorTool({ workspaceDir, agentUser }),
    createTaskTrackerTool(options.taskTracker),
    createFinishTool(),
    createThinkTool(),
  ];
}

/** Closes every tool: ends the terminal's shell and everything it still runs. */
export async function closeTools(tools: readonly AnyTool[]): Promise<void> {
  await Promise.all(tools.map((tool) => tool.close()));
}
