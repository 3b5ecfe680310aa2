/** What a tool reports back: the value of ObservationEvent.observation. */
import { z } from 'zod';
import { FileEditorCommandSchema, TaskItemSchema } from './actions.js';
import { ContentItemSchema } from './content.js';
import { isTimestamp } from './timestamp.js';

/** Every observation carries the content shown to the LLM and whether the tool failed. */
const observationFields = {
  content: z.array(ContentItemSchema).default([]),
  is_error: z.boolean().default(false),
};

/** The shell state read from the prompt after a command; -1 means "not known yet". */
export const CmdOutputMetadataSchema = z.strictObject({
  exit_code: z.int().default(-1),
  pid: z.int().default(-1),
  username: z.string().nullable().default(null),
  hostname: z.string().nullable().default(null),
  working_dir: z.string().nullable().default(null),
  py_interpreter_path: z.string().nullable().default(null),
  prefix: z.string().default(''),
  suffix: z.string().default(''),
});
export type CmdOutputMetadata = z.output<typeof CmdOutputMetadataSchema>;

export const FileEntrySchema = z.strictObject({
  name: z.string(),
  path: z.string(),
  is_directory: z.boolean(),
  size: z.int().min(0),
  modified_time: z.string().refine(isTimestamp, 'Expected an ISO 8601 date-time'),
});
export type FileEntry = z.output<typeof FileEntrySchema>;

export const MCPToolObservationSchema = z.strictObject({
  kind: z.literal('MCPToolObservation'),
  ...observationFields,
  tool_name: z.string(),
});

export const FinishObservationSchema = z.strictObject({
  kind: z.literal('FinishObservation'),
  ...observationFields,
});

export const ThinkObservationSchema = z.strictObject({
  kind: z.literal('ThinkObservation'),
  ...observationFields,
});

export const BrowserObservationSchema = z.strictObject({
  kind: z.literal('BrowserObservation'),
  ...observationFields,
  screenshot_data: z.string().nullable().default(null),
  full_output_save_dir: z.string().nullable().default(null),
});

const fileEditorObservationFields = {
  ...observationFields,
  command: FileEditorCommandSchema,
  path: z.string().nullable().default(null),
  prev_exist: z.boolean().default(true),
  old_content: z.string().nullable().default(null),
  new_content: z.string().nullable().default(null),
};

export const FileEditorObservationSchema = z.strictObject({
  kind: z.literal('FileEditorObservation'),
  ...fileEditorObservationFields,
});

export const PlanningFileEditorObservationSchema = z.strictObject({
  kind: z.literal('PlanningFileEditorObservation'),
  ...fileEditorObservationFields,
});

export const EditObservationSchema = z.strictObject({
  kind: z.literal('EditObservation'),
  ...observationFields,
  file_path: z.string().nullable().default(null),
  is_new_file: z.boolean().default(false),
  replacements_made: z.int().min(0).default(0),
  old_content: z.string().nullable().default(null),
  new_content: z.string().nullable().default(null),
});

export const ListDirectoryObservationSchema = z.strictObject({
  kind: z.literal('ListDirectoryObservation'),
  ...observationFields,
  dir_path: z.string().nullable().default(null),
  entries: z.array(FileEntrySchema).default([]),
  total_count: z.int().min(0).default(0),
  is_truncated: z.boolean().default(false),
});

export const ReadFileObservationSchema = z.strictObject({
  kind: z.literal('ReadFileObservation'),
  ...observationFields,
  file_path: z.string(),
  file_content: z.string().default(''),
  is_truncated: z.boolean().default(false),
  /** First and last line shown, 1-based, when the content was truncated. */
  lines_shown: z.tuple([z.int(), z.int()]).nullable().default(null),
  total_lines: z.int().min(0).nullable().default(null),
});

export const WriteFileObservationSchema = z.strictObject({
  kind: z.literal('WriteFileObservation'),
  ...observationFields,
  file_path: z.string().nullable().default(null),
  is_new_file: z.boolean().default(false),
  old_content: z.string().nullable().default(null),
  new_content: z.string().nullable().default(null),
});

export const GlobObservationSchema = z.strictObject({
  kind: z.literal('GlobObservation'),
  ...observationFields,
  files: z.array(z.string()),
  pattern: z.string(),
  search_path: z.string(),
  truncated: z.boolean().default(false),
});

export const GrepObservationSchema = z.strictObject({
  kind: z.literal('GrepObservation'),
  ...observationFields,
  matches: z.array(z.string()),
  pattern: z.string(),
  search_path: z.string(),
  include_pattern: z.string().nullable().default(null),
  truncated: z.boolean().default(false),
});

export const TaskTrackerObservationSchema = z.strictObject({
  kind: z.literal('TaskTrackerObservation'),
  ...observationFields,
  command: z.enum(['view', 'plan']),
  task_list: z.array(TaskItemSchema).default([]),
});

export const TerminalObservationSchema = z.strictObject({
  kind: z.literal('TerminalObservation'),
  ...observationFields,
  /** Null or empty when this reports more output of a command that hit the soft timeout. */
  command: z.string().nullable(),
  exit_code: z.int().nullable().default(null),
  timeout: z.boolean().default(false),
  metadata: CmdOutputMetadataSchema.prefault({}),
  full_output_save_dir: z.string().nullable().default(null),
});

export const ObservationSchema = z.discriminatedUnion('kind', [
  MCPToolObservationSchema,
  FinishObservationSchema,
  ThinkObservationSchema,
  BrowserObservationSchema,
  FileEditorObservationSchema,
  EditObservationSchema,
  ListDirectoryObservationSchema,
  ReadFileObservationSchema,
  WriteFileObservationSchema,
  GlobObservationSchema,
  GrepObservationSchema,
  PlanningFileEditorObservationSchema,
  TaskTrackerObservationSchema,
  TerminalObservationSchema,
]);
export type Observation = z.output<typeof ObservationSchema>;
export type ObservationInput = z.input<typeof ObservationSchema>;
