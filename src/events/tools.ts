/** The tools an agent offers its LLM, as listed in SystemPromptEvent.tools. */
import { z } from 'zod';
import { JsonObjectSchema } from './json.js';

/** Hints for clients about a tool's effects; the defaults are MCP's. */
export const ToolAnnotationsSchema = z.strictObject({
  title: z.string().nullable().default(null),
  readOnlyHint: z.boolean().default(false),
  destructiveHint: z.boolean().default(true),
  idempotentHint: z.boolean().default(false),
  openWorldHint: z.boolean().default(true),
});
export type ToolAnnotations = z.output<typeof ToolAnnotationsSchema>;

const toolDefinitionFields = {
  title: z.string(),
  description: z.string(),
  /** Name of the Action kind the tool takes. */
  action_type: z.string(),
  observation_type: z.string().nullable().default(null),
  annotations: ToolAnnotationsSchema.nullable().default(null),
  meta: JsonObjectSchema.nullable().default(null),
};

/** Every built-in tool kind has the same fields; only the kind tells them apart. */
function toolDefinitionSchema<K extends string>(kind: K) {
  return z.strictObject({ kind: z.literal(kind), ...toolDefinitionFields });
}

/** MCP's own annotations, where every hint may be unset. */
export const MCPToolAnnotationsSchema = z.strictObject({
  title: z.string().nullable().default(null),
  readOnlyHint: z.boolean().nullable().default(null),
  destructiveHint: z.boolean().nullable().default(null),
  idempotentHint: z.boolean().nullable().default(null),
  openWorldHint: z.boolean().nullable().default(null),
});

export const MCPIconSchema = z.strictObject({
  src: z.string(),
  mimeType: z.string().nullable().default(null),
  sizes: z.array(z.string()).nullable().default(null),
});

export const MCPToolExecutionSchema = z.strictObject({
  taskSupport: z.enum(['forbidden', 'optional', 'required']).nullable().default(null),
});

/** A tool as an MCP server lists it (MCP's `Tool`). */
export const MCPToolSchema = z.strictObject({
  name: z.string(),
  title: z.string().nullable().default(null),
  description: z.string().nullable().default(null),
  inputSchema: JsonObjectSchema,
  outputSchema: JsonObjectSchema.nullable().default(null),
  annotations: MCPToolAnnotationsSchema.nullable().default(null),
  icons: z.array(MCPIconSchema).nullable().default(null),
  execution: MCPToolExecutionSchema.nullable().default(null),
  _meta: JsonObjectSchema.nullable().default(null),
});
export type MCPTool = z.output<typeof MCPToolSchema>;

export const MCPToolDefinitionSchema = z.strictObject({
  kind: z.literal('MCPToolDefinition'),
  ...toolDefinitionFields,
  mcp_tool: MCPToolSchema,
});

export const FinishToolSchema = toolDefinitionSchema('FinishTool');
export const ThinkToolSchema = toolDefinitionSchema('ThinkTool');
export const BrowserClickToolSchema = toolDefinitionSchema('BrowserClickTool');
export const BrowserCloseTabToolSchema = toolDefinitionSchema('BrowserCloseTabTool');
export const BrowserGetContentToolSchema = toolDefinitionSchema('BrowserGetContentTool');
export const BrowserGetStateToolSchema = toolDefinitionSchema('BrowserGetStateTool');
export const BrowserGetStorageToolSchema = toolDefinitionSchema('BrowserGetStorageTool');
export const BrowserGoBackToolSchema = toolDefinitionSchema('BrowserGoBackTool');
export const BrowserListTabsToolSchema = toolDefinitionSchema('BrowserListTabsTool');
export const BrowserNavigateToolSchema = toolDefinitionSchema('BrowserNavigateTool');
export const BrowserScrollToolSchema = toolDefinitionSchema('BrowserScrollTool');
export const BrowserSetStorageToolSchema = toolDefinitionSchema('BrowserSetStorageTool');
export const BrowserStartRecordingToolSchema = toolDefinitionSchema('BrowserStartRecordingTool');
export const BrowserStopRecordingToolSchema = toolDefinitionSchema('BrowserStopRecordingTool');
export const BrowserSwitchTabToolSchema = toolDefinitionSchema('BrowserSwitchTabTool');
export const BrowserToolSetSchema = toolDefinitionSchema('BrowserToolSet');
export const BrowserTypeToolSchema = toolDefinitionSchema('BrowserTypeTool');
export const FileEditorToolSchema = toolDefinitionSchema('FileEditorTool');
export const EditToolSchema = toolDefinitionSchema('EditTool');
export const ListDirectoryToolSchema = toolDefinitionSchema('ListDirectoryTool');
export const ReadFileToolSchema = toolDefinitionSchema('ReadFileTool');
export const WriteFileToolSchema = toolDefinitionSchema('WriteFileTool');
export const GlobToolSchema = toolDefinitionSchema('GlobTool');
export const GrepToolSchema = toolDefinitionSchema('GrepTool');
export const PlanningFileEditorToolSchema = toolDefinitionSchema('PlanningFileEditorTool');
export const TaskTrackerToolSchema = toolDefinitionSchema('TaskTrackerTool');
export const TerminalToolSchema = toolDefinitionSchema('TerminalTool');

export const ToolDefinitionSchema = z.discriminatedUnion('kind', [
  MCPToolDefinitionSchema,
  FinishToolSchema,
  ThinkToolSchema,
  BrowserClickToolSchema,
  BrowserCloseTabToolSchema,
  BrowserGetContentToolSchema,
  BrowserGetStateToolSchema,
  BrowserGetStorageToolSchema,
  BrowserGoBackToolSchema,
  BrowserListTabsToolSchema,
  BrowserNavigateToolSchema,
  BrowserScrollToolSchema,
  BrowserSetStorageToolSchema,
  BrowserStartRecordingToolSchema,
  BrowserStopRecordingToolSchema,
  BrowserSwitchTabToolSchema,
  BrowserToolSetSchema,
  BrowserTypeToolSchema,
  FileEditorToolSchema,
  EditToolSchema,
  ListDirectoryToolSchema,
  ReadFileToolSchema,
  WriteFileToolSchema,
  GlobToolSchema,
  GrepToolSchema,
  PlanningFileEditorToolSchema,
  TaskTrackerToolSchema,
  TerminalToolSchema,
]);
export type ToolDefinition = z.output<typeof ToolDefinitionSchema>;
export type ToolDefinitionInput = z.input<typeof ToolDefinitionSchema>;
