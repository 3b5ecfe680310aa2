export { catalogEntry, TOOL_CATALOG, type CatalogEntry, type ToolEnvironment } from './catalog.js';
export {
  closeTools,
  createConversationTools,
  selectableToolNames,
  validateAgentTools,
  type ToolChoice,
  type ToolSpec,
} from './conversation-tools.js';
export { createFileEditorTool, type FileEditorToolOptions } from './file-editor/file-editor-tool.js';
export { createFinishTool } from './finish-tool.js';
export { createTaskTrackerTool, type TaskTrackerToolOptions } from './task-tracker-tool.js';
export {
  createTerminalTool,
  shellEnvironment,
  TERMINAL_DEFAULTS,
  type TerminalToolOptions,
} from './terminal/terminal-tool.js';
export { createThinkTool } from './think-tool.js';
export { conversationToolSet, fixedToolSet, type ToolSet } from './tool-set.js';
export { connectMcpTools, type McpTools } from './mcp/mcp-tools.js';
export type {
  AnyTool,
  FileEditorAction,
  FileEditorObservation,
  FinishAction,
  FinishObservation,
  ParsedArguments,
  TaskTrackerAction,
  TaskTrackerObservation,
  TerminalAction,
  TerminalObservation,
  ThinkAction,
  ThinkObservation,
  Tool,
  ToolAction,
  ToolContext,
  ToolObservation,
} from './tool.js';
