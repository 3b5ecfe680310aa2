/** What an LLM tool call asks a tool to do: the value of ActionEvent.action. */
import { z } from 'zod';
import { JsonObjectSchema } from './json.js';

export const FileEditorCommandSchema = z.enum(['view', 'create', 'str_replace', 'insert', 'undo_edit']);

export const TaskItemSchema = z.strictObject({
  title: z.string(),
  notes: z.string().default(''),
  status: z.enum(['todo', 'in_progress', 'done']).default('todo'),
});
export type TaskItem = z.output<typeof TaskItemSchema>;

export const MCPToolActionSchema = z.strictObject({
  kind: z.literal('MCPToolAction'),
  data: JsonObjectSchema.default({}),
});

export const FinishActionSchema = z.strictObject({
  kind: z.literal('FinishAction'),
  message: z.string(),
});

export const ThinkActionSchema = z.strictObject({
  kind: z.literal('ThinkAction'),
  thought: z.string(),
});

export const BrowserActionSchema = z.strictObject({ kind: z.literal('BrowserAction') });

export const BrowserClickActionSchema = z.strictObject({
  kind: z.literal('BrowserClickAction'),
  index: z.int().min(0),
  new_tab: z.boolean().default(false),
});

export const BrowserCloseTabActionSchema = z.strictObject({
  kind: z.literal('BrowserCloseTabAction'),
  tab_id: z.string(),
});

export const BrowserGetContentActionSchema = z.strictObject({
  kind: z.literal('BrowserGetContentAction'),
  extract_links: z.boolean().default(false),
  start_from_char: z.int().min(0).default(0),
});

export const BrowserGetStateActionSchema = z.strictObject({
  kind: z.literal('BrowserGetStateAction'),
  include_screenshot: z.boolean().default(false),
});

export const BrowserGetStorageActionSchema = z.strictObject({ kind: z.literal('BrowserGetStorageAction') });

export const BrowserGoBackActionSchema = z.strictObject({ kind: z.literal('BrowserGoBackAction') });

export const BrowserListTabsActionSchema = z.strictObject({ kind: z.literal('BrowserListTabsAction') });

export const BrowserNavigateActionSchema = z.strictObject({
  kind: z.literal('BrowserNavigateAction'),
  url: z.string(),
  new_tab: z.boolean().default(false),
});

export const BrowserScrollActionSchema = z.strictObject({
  kind: z.literal('BrowserScrollAction'),
  direction: z.enum(['up', 'down']).default('down'),
});

/** A Playwright storage state (`cookies`, `origins`), passed through as the browser gave it. */
export const BrowserSetStorageActionSchema = z.strictObject({
  kind: z.literal('BrowserSetStorageAction'),
  storage_state: JsonObjectSchema,
});

export const BrowserStartRecordingActionSchema = z.strictObject({
  kind: z.literal('BrowserStartRecordingAction'),
});

export const BrowserStopRecordingActionSchema = z.strictObject({
  kind: z.literal('BrowserStopRecordingAction'),
});

export const BrowserSwitchTabActionSchema = z.strictObject({
  kind: z.literal('BrowserSwitchTabAction'),
  tab_id: z.string(),
});

export const BrowserTypeActionSchema = z.strictObject({
  kind: z.literal('BrowserTypeAction'),
  index: z.int().min(0),
  text: z.string(),
});

const fileEditorActionFields = {
  command: FileEditorCommandSchema,
  path: z.string(),
  file_text: z.string().nullable().default(null),
  old_str: z.string().nullable().default(null),
  new_str: z.string().nullable().default(null),
  insert_line: z.int().min(0).nullable().default(null),
  view_range: z.array(z.int()).nullable().default(null),
};

export const FileEditorActionSchema = z.strictObject({
  kind: z.literal('FileEditorAction'),
  ...fileEditorActionFields,
});

export const PlanningFileEditorActionSchema = z.strictObject({
  kind: z.literal('PlanningFileEditorAction'),
  ...fileEditorActionFields,
});

export const EditActionSchema = z.strictObject({
  kind: z.literal('EditAction'),
  file_path: z.string(),
  old_string: z.string(),
  new_string: z.string(),
  expected_replacements: z.int().min(0).default(1),
});

export const ListDirectoryActionSchema = z.strictObject({
  kind: z.literal('ListDirectoryAction'),
  dir_path: z.string().default('.'),
  recursive: z.boolean().default(false),
});

export const ReadFileActionSchema = z.strictObject({
  kind: z.literal('ReadFileAction'),
  file_path: z.string(),
  offset: z.int().min(0).nullable().default(null),
  limit: z.int().min(1).nullable().default(null),
});

export const WriteFileActionSchema = z.strictObject({
  kind: z.literal('WriteFileAction'),
  file_path: z.string(),
  content: z.string(),
});

export const GlobActionSchema = z.strictObject({
  kind: z.literal('GlobAction'),
  pattern: z.string(),
  path: z.string().nullable().default(null),
});

export const GrepActionSchema = z.strictObject({
  kind: z.literal('GrepAction'),
  pattern: z.string(),
  path: z.string().nullable().default(null),
  include: z.string().nullable().default(null),
});

export const TaskTrackerActionSchema = z.strictObject({
  kind: z.literal('TaskTrackerAction'),
  command: z.enum(['view', 'plan']).default('view'),
  task_list: z.array(TaskItemSchema).default([]),
});

export const TerminalActionSchema = z.strictObject({
  kind: z.literal('TerminalAction'),
  command: z.string(),
  is_input: z.boolean().default(false),
  /** Seconds; null lets the terminal ask again after a quiet spell instead. */
  timeout: z.number().min(0).nullable().default(null),
  reset: z.boolean().default(false),
});

export const ActionSchema = z.discriminatedUnion('kind', [
  MCPToolActionSchema,
  FinishActionSchema,
  ThinkActionSchema,
  BrowserActionSchema,
  BrowserClickActionSchema,
  BrowserCloseTabActionSchema,
  BrowserGetContentActionSchema,
  BrowserGetStateActionSchema,
  BrowserGetStorageActionSchema,
  BrowserGoBackActionSchema,
  BrowserListTabsActionSchema,
  BrowserNavigateActionSchema,
  BrowserScrollActionSchema,
  BrowserSetStorageActionSchema,
  BrowserStartRecordingActionSchema,
  BrowserStopRecordingActionSchema,
  BrowserSwitchTabActionSchema,
  BrowserTypeActionSchema,
  FileEditorActionSchema,
  EditActionSchema,
  ListDirectoryActionSchema,
  ReadFileActionSchema,
  WriteFileActionSchema,
  GlobActionSchema,
  GrepActionSchema,
  PlanningFileEditorActionSchema,
  TaskTrackerActionSchema,
  TerminalActionSchema,
]);
export type Action = z.output<typeof ActionSchema>;
export type ActionInput = z.input<typeof ActionSchema>;
