/**
 * Table of every schema: a minimal input holding exactly the required fields, and the defaults the
 * parse must add to it. Tests derive "missing field refused" from dropping each key of `input`, so
 * a minimal input that carried an optional field would fail them.
 */
import { expect } from 'vitest';
import type { z } from 'zod';
import {
  ActionSchema,
  CmdOutputMetadataSchema,
  CriticResultSchema,
  EventSchema,
  FileEntrySchema,
  ImageContentSchema,
  MCPIconSchema,
  MCPToolAnnotationsSchema,
  MCPToolExecutionSchema,
  MCPToolSchema,
  MessageSchema,
  MessageToolCallSchema,
  ObservationSchema,
  ReasoningItemModelSchema,
  RedactedThinkingBlockSchema,
  TaskItemSchema,
  TextContentSchema,
  ThinkingBlockSchema,
  ToolAnnotationsSchema,
  ToolDefinitionSchema,
  type EventInput,
  type EventKind,
} from '../../src/events/index.js';

export interface Case {
  name: string;
  schema: z.ZodType;
  input: Record<string, unknown>;
  defaults: Record<string, unknown>;
}

export const toolCall = {
  id: 'call_1',
  name: 'terminal',
  arguments: '{"command":"ls"}',
  origin: 'completion',
} as const;

const emptyMessage = {
  content: [],
  tool_calls: null,
  tool_call_id: null,
  name: null,
  reasoning_content: null,
  thinking_blocks: [],
  responses_reasoning_item: null,
};

const minimalEvents: { [K in EventKind]: [Extract<EventInput, { kind: K }>, Record<string, unknown>] } = {
  Condensation: [
    { kind: 'Condensation', llm_response_id: 'resp-1' },
    { source: 'environment', forgotten_event_ids: [], summary: null, summary_offset: null },
  ],
  CondensationRequest: [{ kind: 'CondensationRequest' }, { source: 'environment' }],
  CondensationSummaryEvent: [{ kind: 'CondensationSummaryEvent', summary: 'so far' }, { source: 'environment' }],
  ConversationErrorEvent: [
    { kind: 'ConversationErrorEvent', source: 'environment', code: 'RuntimeError', detail: 'boom' },
    {},
  ],
  ConversationStateUpdateEvent: [
    { kind: 'ConversationStateUpdateEvent' },
    { source: 'environment', key: expect.any(String), value: {} },
  ],
  LLMCompletionLogEvent: [
    { kind: 'LLMCompletionLogEvent', filename: 'log.json', log_data: '{}' },
    { source: 'environment', model_name: 'unknown', usage_id: 'default' },
  ],
  ActionEvent: [
    {
      kind: 'ActionEvent',
      thought: [],
      tool_name: 'terminal',
      tool_call_id: 'call_1',
      tool_call: { id: 'call_1', name: 'terminal', arguments: '{}', origin: 'completion' },
      llm_response_id: 'resp-1',
    },
    {
      source: 'agent',
      reasoning_content: null,
      thinking_blocks: [],
      responses_reasoning_item: null,
      action: null,
      security_risk: 'UNKNOWN',
      critic_result: null,
      summary: null,
    },
  ],
  MessageEvent: [
    { kind: 'MessageEvent', source: 'user', llm_message: { role: 'user' } },
    {
      llm_message: { role: 'user', ...emptyMessage },
      llm_response_id: null,
      activated_skills: [],
      extended_content: [],
      sender: null,
      critic_result: null,
    },
  ],
  AgentErrorEvent: [
    { kind: 'AgentErrorEvent', tool_name: 'terminal', tool_call_id: 'call_1', error: 'bad arguments' },
    { source: 'agent' },
  ],
  ObservationEvent: [
    {
      kind: 'ObservationEvent',
      tool_name: 'finish',
      tool_call_id: 'call_1',
      observation: { kind: 'FinishObservation' },
      action_id: 'evt-1',
    },
    { source: 'environment', observation: { kind: 'FinishObservation', content: [], is_error: false } },
  ],
  UserRejectObservation: [
    { kind: 'UserRejectObservation', tool_name: 'terminal', tool_call_id: 'call_1', action_id: 'evt-1' },
    { source: 'environment', rejection_reason: 'User rejected the action', rejection_source: 'user' },
  ],
  SystemPromptEvent: [
    { kind: 'SystemPromptEvent', system_prompt: { text: 'You are helpful.' }, tools: [] },
    {
      source: 'agent',
      system_prompt: { type: 'text', text: 'You are helpful.', cache_prompt: false },
      dynamic_context: null,
    },
  ],
  TokenEvent: [{ kind: 'TokenEvent', source: 'agent', prompt_token_ids: [1, 2], response_token_ids: [3] }, {}],
  PauseEvent: [{ kind: 'PauseEvent' }, { source: 'user' }],
};

export const eventCases: Case[] = Object.entries(minimalEvents).map(([name, [input, defaults]]) => ({
  name,
  schema: EventSchema,
  input,
  defaults,
}));

const fileEditorDefaults = { file_text: null, old_str: null, new_str: null, insert_line: null, view_range: null };

const actions: Array<[Record<string, unknown>, Record<string, unknown>]> = [
  [{ kind: 'MCPToolAction' }, { data: {} }],
  [{ kind: 'FinishAction', message: 'Done.' }, {}],
  [{ kind: 'ThinkAction', thought: 'Hmm.' }, {}],
  [{ kind: 'BrowserAction' }, {}],
  [{ kind: 'BrowserClickAction', index: 4 }, { new_tab: false }],
  [{ kind: 'BrowserCloseTabAction', tab_id: 'ab12' }, {}],
  [{ kind: 'BrowserGetContentAction' }, { extract_links: false, start_from_char: 0 }],
  [{ kind: 'BrowserGetStateAction' }, { include_screenshot: false }],
  [{ kind: 'BrowserGetStorageAction' }, {}],
  [{ kind: 'BrowserGoBackAction' }, {}],
  [{ kind: 'BrowserListTabsAction' }, {}],
  [{ kind: 'BrowserNavigateAction', url: 'https://example.com' }, { new_tab: false }],
  [{ kind: 'BrowserScrollAction' }, { direction: 'down' }],
  [{ kind: 'BrowserSetStorageAction', storage_state: { cookies: [], origins: [] } }, {}],
  [{ kind: 'BrowserStartRecordingAction' }, {}],
  [{ kind: 'BrowserStopRecordingAction' }, {}],
  [{ kind: 'BrowserSwitchTabAction', tab_id: 'ab12' }, {}],
  [{ kind: 'BrowserTypeAction', index: 2, text: 'hello' }, {}],
  [{ kind: 'FileEditorAction', command: 'view', path: '/w/a.txt' }, fileEditorDefaults],
  [{ kind: 'EditAction', file_path: 'a.txt', old_string: 'a', new_string: 'b' }, { expected_replacements: 1 }],
  [{ kind: 'ListDirectoryAction' }, { dir_path: '.', recursive: false }],
  [{ kind: 'ReadFileAction', file_path: 'a.txt' }, { offset: null, limit: null }],
  [{ kind: 'WriteFileAction', file_path: 'a.txt', content: 'x' }, {}],
  [{ kind: 'GlobAction', pattern: '**/*.ts' }, { path: null }],
  [{ kind: 'GrepAction', pattern: 'TODO' }, { path: null, include: null }],
  [{ kind: 'PlanningFileEditorAction', command: 'create', path: '/w/PLAN.md' }, fileEditorDefaults],
  [{ kind: 'TaskTrackerAction' }, { command: 'view', task_list: [] }],
  [{ kind: 'TerminalAction', command: 'ls' }, { is_input: false, timeout: null, reset: false }],
];

export const actionCases: Case[] = actions.map(([input, defaults]) => ({
  name: String(input['kind']),
  schema: ActionSchema,
  input,
  defaults,
}));

const observed = { content: [], is_error: false };
const fileEditorObserved = { ...observed, path: null, prev_exist: true, old_content: null, new_content: null };

const observations: Array<[Record<string, unknown>, Record<string, unknown>]> = [
  [{ kind: 'MCPToolObservation', tool_name: 'fetch' }, observed],
  [{ kind: 'FinishObservation' }, observed],
  [{ kind: 'ThinkObservation' }, observed],
  [{ kind: 'BrowserObservation' }, { ...observed, screenshot_data: null, full_output_save_dir: null }],
  [{ kind: 'FileEditorObservation', command: 'view' }, fileEditorObserved],
  [
    { kind: 'EditObservation' },
    { ...observed, file_path: null, is_new_file: false, replacements_made: 0, old_content: null, new_content: null },
  ],
  [
    { kind: 'ListDirectoryObservation' },
    { ...observed, dir_path: null, entries: [], total_count: 0, is_truncated: false },
  ],
  [
    { kind: 'ReadFileObservation', file_path: 'a.txt' },
    { ...observed, file_content: '', is_truncated: false, lines_shown: null, total_lines: null },
  ],
  [
    { kind: 'WriteFileObservation' },
    { ...observed, file_path: null, is_new_file: false, old_content: null, new_content: null },
  ],
  [{ kind: 'GlobObservation', files: [], pattern: '*', search_path: '/w' }, { ...observed, truncated: false }],
  [
    { kind: 'GrepObservation', matches: [], pattern: 'x', search_path: '/w' },
    { ...observed, include_pattern: null, truncated: false },
  ],
  [{ kind: 'PlanningFileEditorObservation', command: 'view' }, fileEditorObserved],
  [{ kind: 'TaskTrackerObservation', command: 'plan' }, { ...observed, task_list: [] }],
  [
    { kind: 'TerminalObservation', command: null },
    {
      ...observed,
      exit_code: null,
      timeout: false,
      metadata: {
        exit_code: -1,
        pid: -1,
        username: null,
        hostname: null,
        working_dir: null,
        py_interpreter_path: null,
        prefix: '',
        suffix: '',
      },
      full_output_save_dir: null,
    },
  ],
];

export const observationCases: Case[] = observations.map(([input, defaults]) => ({
  name: String(input['kind']),
  schema: ObservationSchema,
  input,
  defaults,
}));

export const TOOL_KINDS = [
  'FinishTool',
  'ThinkTool',
  'BrowserClickTool',
  'BrowserCloseTabTool',
  'BrowserGetContentTool',
  'BrowserGetStateTool',
  'BrowserGetStorageTool',
  'BrowserGoBackTool',
  'BrowserListTabsTool',
  'BrowserNavigateTool',
  'BrowserScrollTool',
  'BrowserSetStorageTool',
  'BrowserStartRecordingTool',
  'BrowserStopRecordingTool',
  'BrowserSwitchTabTool',
  'BrowserToolSet',
  'BrowserTypeTool',
  'FileEditorTool',
  'EditTool',
  'ListDirectoryTool',
  'ReadFileTool',
  'WriteFileTool',
  'GlobTool',
  'GrepTool',
  'PlanningFileEditorTool',
  'TaskTrackerTool',
  'TerminalTool',
];

const toolFields = { title: 'terminal', description: 'Run a command.', action_type: 'TerminalAction' };
const toolDefaults = { observation_type: null, annotations: null, meta: null };
const mcpTool = { name: 'fetch', inputSchema: { type: 'object' } };
const mcpToolDefaults = {
  title: null,
  description: null,
  outputSchema: null,
  annotations: null,
  icons: null,
  execution: null,
  _meta: null,
};

export const toolCases: Case[] = [
  {
    name: 'MCPToolDefinition',
    schema: ToolDefinitionSchema,
    input: { kind: 'MCPToolDefinition', ...toolFields, mcp_tool: mcpTool },
    defaults: { ...toolDefaults, mcp_tool: { ...mcpTool, ...mcpToolDefaults } },
  },
  ...TOOL_KINDS.map((kind) => ({
    name: kind,
    schema: ToolDefinitionSchema,
    input: { kind, ...toolFields },
    defaults: toolDefaults,
  })),
];

export const supportingCases: Case[] = [
  {
    name: 'TextContent',
    schema: TextContentSchema,
    input: { text: 'hi' },
    defaults: { type: 'text', cache_prompt: false },
  },
  {
    name: 'ImageContent',
    schema: ImageContentSchema,
    input: { image_urls: ['data:image/png;base64,AA=='] },
    defaults: { type: 'image', cache_prompt: false },
  },
  {
    name: 'ThinkingBlock',
    schema: ThinkingBlockSchema,
    input: { thinking: 'hmm' },
    defaults: { type: 'thinking', signature: null },
  },
  {
    name: 'RedactedThinkingBlock',
    schema: RedactedThinkingBlockSchema,
    input: { data: 'xx' },
    defaults: { type: 'redacted_thinking' },
  },
  {
    name: 'ReasoningItemModel',
    schema: ReasoningItemModelSchema,
    input: {},
    defaults: { id: null, summary: [], content: null, encrypted_content: null, status: null },
  },
  { name: 'MessageToolCall', schema: MessageToolCallSchema, input: toolCall, defaults: {} },
  { name: 'Message', schema: MessageSchema, input: { role: 'assistant' }, defaults: emptyMessage },
  {
    name: 'CriticResult',
    schema: CriticResultSchema,
    input: { score: 0.5, message: null },
    defaults: { metadata: null },
  },
  {
    name: 'TaskItem',
    schema: TaskItemSchema,
    input: { title: 'write tests' },
    defaults: { notes: '', status: 'todo' },
  },
  {
    name: 'FileEntry',
    schema: FileEntrySchema,
    input: { name: 'a.txt', path: '/w/a.txt', is_directory: false, size: 3, modified_time: '2024-05-01T10:00:00' },
    defaults: {},
  },
  {
    name: 'CmdOutputMetadata',
    schema: CmdOutputMetadataSchema,
    input: {},
    defaults: {
      exit_code: -1,
      pid: -1,
      username: null,
      hostname: null,
      working_dir: null,
      py_interpreter_path: null,
      prefix: '',
      suffix: '',
    },
  },
  {
    name: 'ToolAnnotations',
    schema: ToolAnnotationsSchema,
    input: {},
    defaults: { title: null, readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  { name: 'MCPTool', schema: MCPToolSchema, input: mcpTool, defaults: mcpToolDefaults },
  {
    name: 'MCPToolAnnotations',
    schema: MCPToolAnnotationsSchema,
    input: {},
    defaults: { title: null, readOnlyHint: null, destructiveHint: null, idempotentHint: null, openWorldHint: null },
  },
  {
    name: 'MCPIcon',
    schema: MCPIconSchema,
    input: { src: 'https://x/i.png' },
    defaults: { mimeType: null, sizes: null },
  },
  { name: 'MCPToolExecution', schema: MCPToolExecutionSchema, input: {}, defaults: { taskSupport: null } },
];

/** Events with every optional field set to a non-default value, nested types included. */
export const fullEvents: EventInput[] = [
  {
    kind: 'ActionEvent',
    id: 'evt-1',
    timestamp: '2024-05-01T10:00:00.123456',
    source: 'agent',
    thought: [{ type: 'text', text: 'Let me look.', cache_prompt: true }],
    reasoning_content: 'reasoning',
    thinking_blocks: [
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'redacted_thinking', data: 'xx' },
    ],
    responses_reasoning_item: { id: 'rs_1', summary: ['a'], content: ['b'], encrypted_content: 'enc', status: 'done' },
    action: { kind: 'TerminalAction', command: 'ls', is_input: true, timeout: 10, reset: true },
    tool_name: 'terminal',
    tool_call_id: 'call_1',
    tool_call: { id: 'call_1', name: 'terminal', arguments: '{"command":"ls"}', origin: 'responses' },
    llm_response_id: 'resp-1',
    security_risk: 'HIGH',
    critic_result: { score: 0.25, message: 'risky', metadata: { event_ids: ['evt-0'], nested: { a: [1, null] } } },
    summary: 'listing files',
  },
  {
    kind: 'MessageEvent',
    id: 'evt-2',
    timestamp: '2024-05-01T10:00:01Z',
    source: 'agent',
    llm_message: {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Here it is', cache_prompt: false },
        { type: 'image', image_urls: ['https://x/a.png'], cache_prompt: true },
      ],
      tool_calls: [toolCall],
      tool_call_id: 'call_0',
      name: 'terminal',
      reasoning_content: 'because',
      thinking_blocks: [{ thinking: 't' }],
      responses_reasoning_item: { summary: ['s'] },
    },
    llm_response_id: 'resp-2',
    activated_skills: ['git'],
    extended_content: [{ text: 'extra' }],
    sender: 'sub-agent',
    critic_result: { score: 1, message: 'good' },
  },
  {
    kind: 'SystemPromptEvent',
    source: 'agent',
    system_prompt: { text: 'You are helpful.', cache_prompt: true },
    tools: [
      {
        kind: 'TerminalTool',
        title: 'terminal',
        description: 'Run a command.',
        action_type: 'TerminalAction',
        observation_type: 'TerminalObservation',
        annotations: {
          title: 'terminal',
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
        meta: { workspace_root: '/w' },
      },
      {
        kind: 'MCPToolDefinition',
        title: 'fetch',
        description: 'Fetch a URL.',
        action_type: 'MCPToolAction',
        mcp_tool: {
          name: 'fetch',
          title: 'Fetch',
          description: 'Fetch a URL.',
          inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
          outputSchema: { type: 'object' },
          annotations: {
            title: 'Fetch',
            readOnlyHint: true,
            destructiveHint: false,
            idempotentHint: true,
            openWorldHint: true,
          },
          icons: [{ src: 'https://x/i.png', mimeType: 'image/png', sizes: ['16x16'] }],
          execution: { taskSupport: 'optional' },
          _meta: { vendor: 'x' },
        },
      },
    ],
    dynamic_context: { text: 'Working dir: /w' },
  },
  {
    kind: 'ObservationEvent',
    tool_name: 'terminal',
    tool_call_id: 'call_1',
    action_id: 'evt-1',
    observation: {
      kind: 'TerminalObservation',
      content: [{ text: 'a.txt' }],
      is_error: false,
      command: 'ls',
      exit_code: 0,
      timeout: false,
      metadata: { exit_code: 0, pid: 42, username: 'oh', hostname: 'box', working_dir: '/w', prefix: '', suffix: '' },
      full_output_save_dir: '/tmp/out',
    },
  },
  {
    kind: 'ObservationEvent',
    tool_name: 'list_directory',
    tool_call_id: 'call_2',
    action_id: 'evt-3',
    observation: {
      kind: 'ListDirectoryObservation',
      dir_path: '/w',
      entries: [{ name: 'a', path: '/w/a', is_directory: true, size: 0, modified_time: '2024-05-01T10:00:00+02:00' }],
      total_count: 1,
      is_truncated: false,
    },
  },
  {
    kind: 'ObservationEvent',
    tool_name: 'task_tracker',
    tool_call_id: 'call_3',
    action_id: 'evt-4',
    observation: {
      kind: 'TaskTrackerObservation',
      command: 'plan',
      task_list: [{ title: 'a', notes: 'n', status: 'in_progress' }, { title: 'b' }],
    },
  },
  {
    kind: 'ObservationEvent',
    tool_name: 'read_file',
    tool_call_id: 'call_4',
    action_id: 'evt-5',
    observation: {
      kind: 'ReadFileObservation',
      file_path: 'a.txt',
      file_content: 'x',
      is_truncated: true,
      lines_shown: [1, 100],
      total_lines: 500,
    },
  },
  {
    kind: 'Condensation',
    forgotten_event_ids: ['evt-1', 'evt-2'],
    summary: 'they talked',
    summary_offset: 2,
    llm_response_id: 'resp-3',
  },
  { kind: 'ConversationStateUpdateEvent', key: 'execution_status', value: 'running' },
  {
    kind: 'ConversationStateUpdateEvent',
    key: 'full_state',
    value: { execution_status: 'idle', stats: { usage: [1, 2.5, null, true] } },
  },
  {
    kind: 'UserRejectObservation',
    source: 'user',
    tool_name: 'terminal',
    tool_call_id: 'call_1',
    action_id: 'evt-1',
    rejection_reason: 'blocked by policy',
    rejection_source: 'hook',
  },
  {
    kind: 'LLMCompletionLogEvent',
    filename: 'a.json',
    log_data: '{"x":1}',
    model_name: 'gpt',
    usage_id: 'agent',
  },
];
