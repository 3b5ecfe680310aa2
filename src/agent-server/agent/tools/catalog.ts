/**
 * Every tool this server can run, by the names OpenHands clients choose them with in `agent.tools`:
 * the class name (`TerminalTool`) or the tool's own name (`terminal`), as OpenHands' registry takes
 * both. Each entry validates its `params` (what OpenHands passes to the tool's `create`) and makes
 * the tool or tools (a tool set) for one conversation. A new kind of tool is one entry here.
 */
import path from 'node:path';
import { z } from 'zod';
import type { TaskItem } from '../../../events/index.js';
import type { AgentUser } from '../../agent-user.js';
import type { AgentFs } from '../../agent-fs/index.js';
import { createBrowserTools } from './browser/browser-tools.js';
import { createFileEditorTool } from './file-editor/file-editor-tool.js';
import { createEditTool } from './file-tools/edit-tool.js';
import { createListDirectoryTool } from './file-tools/list-directory-tool.js';
import { createReadFileTool } from './file-tools/read-file-tool.js';
import { createWriteFileTool } from './file-tools/write-file-tool.js';
import { createFinishTool } from './finish-tool.js';
import { createPlanningFileEditorTool } from './planning-file-editor-tool.js';
import { createGlobTool, createGrepTool } from './search/search-tools.js';
import { createTaskTrackerTool } from './task-tracker-tool.js';
import { createTerminalTool, type ShellSecrets, type TerminalToolOptions } from './terminal/terminal-tool.js';
import { createThinkTool } from './think-tool.js';
import type { AnyTool } from './tool.js';

/** What the tools of one conversation work with. */
export interface ToolEnvironment {
  workspaceDir: string;
  /** Who the agent's commands and searches run as; the agent-server's own user when absent. */
  agentUser?: AgentUser;
  /** Every file operation the file tools do for the agent, with the agent's rights. */
  files: AgentFs;
  /** The task list the conversation last planned, for a task tracker reopened after a restart. */
  initialTasks?: TaskItem[];
  /** The conversation's secrets, set in the shell's environment. */
  secrets?: ShellSecrets;
  /** Terminal settings a server (or a test) sets for every conversation. */
  terminal?: Omit<TerminalToolOptions, 'workspaceDir' | 'agentUser'>;
}

export interface CatalogEntry {
  /** The tool's name (the function the LLM calls, or the tool set's name). */
  name: string;
  /** OpenHands' class name, the other name it is chosen by. */
  className: string;
  /** Its `params`, strict: a parameter this server does not know is refused, not ignored. */
  params: z.ZodObject;
  /** Built-ins (finish, think) come through `include_default_tools`, not `tools`. */
  builtIn?: boolean;
  create(env: ToolEnvironment, params: Record<string, unknown>): AnyTool[] | Promise<AnyTool[]>;
}

const noParams = z.strictObject({});

const TerminalParamsSchema = z.strictObject({
  /** Seconds without new output after which a command with no timeout of its own is reported as still running. */
  no_change_timeout_seconds: z.int().min(1).nullish(),
  /** `tmux`, or `subprocess` for the PTY `script` opens; tmux when the image has it, when absent. */
  terminal_type: z.enum(['tmux', 'subprocess']).nullish(),
});

const PlanningParamsSchema = z.strictObject({
  plan_path: z
    .string()
    .refine((value) => path.isAbsolute(value), 'plan_path must be an absolute path')
    .nullish(),
});

export const TOOL_CATALOG: readonly CatalogEntry[] = [
  {
    name: 'terminal',
    className: 'TerminalTool',
    params: TerminalParamsSchema,
    create: (env, params) => {
      const { no_change_timeout_seconds: quiet, terminal_type: backend } = TerminalParamsSchema.parse(params);
      return [
        createTerminalTool({
          ...env.terminal,
          workspaceDir: env.workspaceDir,
          agentUser: env.agentUser,
          secrets: env.secrets,
          ...(quiet ? { noChangeTimeoutSeconds: quiet } : {}),
          ...(backend ? { backend: backend === 'tmux' ? 'tmux' : 'script' } : {}),
        }),
      ];
    },
  },
  {
    name: 'file_editor',
    className: 'FileEditorTool',
    params: noParams,
    create: (env) => [createFileEditorTool({ workspaceDir: env.workspaceDir, agentUser: env.agentUser })],
  },
  {
    name: 'task_tracker',
    className: 'TaskTrackerTool',
    params: noParams,
    create: (env) => [createTaskTrackerTool({ initialTasks: env.initialTasks })],
  },
  { name: 'glob', className: 'GlobTool', params: noParams, create: (env) => [createGlobTool(env)] },
  { name: 'grep', className: 'GrepTool', params: noParams, create: (env) => [createGrepTool(env)] },
  { name: 'read_file', className: 'ReadFileTool', params: noParams, create: (env) => [createReadFileTool(env)] },
  { name: 'write_file', className: 'WriteFileTool', params: noParams, create: (env) => [createWriteFileTool(env)] },
  { name: 'edit', className: 'EditTool', params: noParams, create: (env) => [createEditTool(env)] },
  { name: 'list_directory', className: 'ListDirectoryTool', params: noParams, create: (env) => [createListDirectoryTool(env)] },
  {
    name: 'planning_file_editor',
    className: 'PlanningFileEditorTool',
    params: PlanningParamsSchema,
    create: async (env, params) => {
      const planPath = PlanningParamsSchema.parse(params).plan_path ?? undefined;
      return [await createPlanningFileEditorTool({ ...env, planPath })];
    },
  },
  {
    name: 'browser_tool_set',
    className: 'BrowserToolSet',
    params: noParams,
    create: (env) => createBrowserTools({ workspaceDir: env.workspaceDir, files: env.files, agentUser: env.agentUser }),
  },
  { name: 'finish', className: 'FinishTool', params: noParams, builtIn: true, create: () => [createFinishTool()] },
  { name: 'think', className: 'ThinkTool', params: noParams, builtIn: true, create: () => [createThinkTool()] },
];

/** The entry a spec name chooses (`TerminalTool` or `terminal`), or undefined. */
export function catalogEntry(name: string): CatalogEntry | undefined {
  return TOOL_CATALOG.find((entry) => entry.name === name || entry.className === name);
}

/** OpenHands' default agent's tools, when `agent.tools` is absent. */
export const DEFAULT_TOOL_NAMES = ['TerminalTool', 'FileEditorTool', 'TaskTrackerTool'] as const;

/** The built-ins every agent gets unless `include_default_tools` says otherwise. */
export const DEFAULT_BUILT_IN_NAMES = ['FinishTool', 'ThinkTool'] as const;
