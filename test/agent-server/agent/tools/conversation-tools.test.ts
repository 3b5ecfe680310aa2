import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionSchema, ObservationSchema, ToolDefinitionSchema } from '../../../../src/events/index.js';
import { createAgentFs } from '../../../../src/agent-server/agent-fs/index.js';
import {
  closeTools,
  createConversationTools,
  selectableToolNames,
  TOOL_CATALOG,
  validateAgentTools,
  type AnyTool,
  type ToolChoice,
} from '../../../../src/agent-server/agent/tools/index.js';

let workspace: string;
let tools: AnyTool[];
/** Every tool of the catalog, chosen by class name. */
let everyTool: AnyTool[];

const env = () => ({ workspaceDir: workspace, files: createAgentFs() });
const namesOf = (list: AnyTool[]) => list.map((tool) => tool.name);

async function toolsFor(choice: ToolChoice): Promise<string[]> {
  const made = await createConversationTools(choice, env());
  await closeTools(made);
  return namesOf(made);
}

beforeAll(async () => {
  workspace = await fs.mkdtemp(path.join(os.tmpdir(), 'conversation-tools-'));
  tools = await createConversationTools({}, env());
  everyTool = await createConversationTools({ tools: TOOL_CATALOG.filter((e) => !e.builtIn).map((e) => ({ name: e.className })) }, env());
});

afterAll(async () => {
  await closeTools(tools);
  await closeTools(everyTool);
  await fs.rm(workspace, { recursive: true, force: true });
});

function byName(name: string): AnyTool {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
}

describe('createConversationTools', () => {
  it('offers the five tools of OpenHands\' default agent when the agent chooses none', () => {
    expect(tools.map((tool) => [tool.name, tool.actionKind, tool.observationKind, tool.definition.kind])).toEqual([
      ['terminal', 'TerminalAction', 'TerminalObservation', 'TerminalTool'],
      ['file_editor', 'FileEditorAction', 'FileEditorObservation', 'FileEditorTool'],
      ['task_tracker', 'TaskTrackerAction', 'TaskTrackerObservation', 'TaskTrackerTool'],
      ['finish', 'FinishAction', 'FinishObservation', 'FinishTool'],
      ['think', 'ThinkAction', 'ThinkObservation', 'ThinkTool'],
    ]);
  });

  it('offers exactly the chosen tools, by either name, with finish and think after them', async () => {
    expect(await toolsFor({ tools: [{ name: 'GrepTool' }, { name: 'read_file' }] })).toEqual(['grep', 'read_file', 'finish', 'think']);
    expect(await toolsFor({ tools: [] })).toEqual(['finish', 'think']);
    expect(await toolsFor({ tools: [{ name: 'TerminalTool' }, { name: 'terminal' }, { name: 'FinishTool' }] })).toEqual(['terminal', 'finish', 'think']);
    expect(await toolsFor({ tools: [{ name: 'GlobTool' }], include_default_tools: [] })).toEqual(['glob']);
    expect(await toolsFor({ tools: [], include_default_tools: ['FinishTool'] })).toEqual(['finish']);
  });

  it('keeps the tools whose name filter_tools_regex matches from its start, never filtering the built-ins', async () => {
    const every = { tools: selectableToolNames().map((name) => ({ name })) };
    expect(await toolsFor({ ...every, filter_tools_regex: '(file|grep)' })).toEqual(['file_editor', 'grep', 'finish', 'think']);
    expect(await toolsFor({ ...every, filter_tools_regex: '^(?!.*(file|browser)).*_' })).toEqual(['task_tracker', 'list_directory', 'finish', 'think']);
    expect(await toolsFor({ ...every, filter_tools_regex: 'browser_.*_tab' })).toEqual(['browser_list_tabs', 'browser_switch_tab', 'browser_close_tab', 'finish', 'think']);
    expect(await toolsFor({ ...every, filter_tools_regex: '(?i)GL(?P<rest>OB)$' })).toEqual(['glob', 'finish', 'think']);
  });

  it('makes every tool of the catalog with its event-model kinds', () => {
    expect(everyTool.map((tool) => [tool.name, tool.actionKind, tool.observationKind, tool.definition.kind])).toEqual([
      ['terminal', 'TerminalAction', 'TerminalObservation', 'TerminalTool'],
      ['file_editor', 'FileEditorAction', 'FileEditorObservation', 'FileEditorTool'],
      ['task_tracker', 'TaskTrackerAction', 'TaskTrackerObservation', 'TaskTrackerTool'],
      ['glob', 'GlobAction', 'GlobObservation', 'GlobTool'],
      ['grep', 'GrepAction', 'GrepObservation', 'GrepTool'],
      ['read_file', 'ReadFileAction', 'ReadFileObservation', 'ReadFileTool'],
      ['write_file', 'WriteFileAction', 'WriteFileObservation', 'WriteFileTool'],
      ['edit', 'EditAction', 'EditObservation', 'EditTool'],
      ['list_directory', 'ListDirectoryAction', 'ListDirectoryObservation', 'ListDirectoryTool'],
      ['planning_file_editor', 'PlanningFileEditorAction', 'PlanningFileEditorObservation', 'PlanningFileEditorTool'],
      ['browser_navigate', 'BrowserNavigateAction', 'BrowserObservation', 'BrowserNavigateTool'],
      ['browser_click', 'BrowserClickAction', 'BrowserObservation', 'BrowserClickTool'],
      ['browser_get_state', 'BrowserGetStateAction', 'BrowserObservation', 'BrowserGetStateTool'],
      ['browser_get_content', 'BrowserGetContentAction', 'BrowserObservation', 'BrowserGetContentTool'],
      ['browser_type', 'BrowserTypeAction', 'BrowserObservation', 'BrowserTypeTool'],
      ['browser_scroll', 'BrowserScrollAction', 'BrowserObservation', 'BrowserScrollTool'],
      ['browser_go_back', 'BrowserGoBackAction', 'BrowserObservation', 'BrowserGoBackTool'],
      ['browser_list_tabs', 'BrowserListTabsAction', 'BrowserObservation', 'BrowserListTabsTool'],
      ['browser_switch_tab', 'BrowserSwitchTabAction', 'BrowserObservation', 'BrowserSwitchTabTool'],
      ['browser_close_tab', 'BrowserCloseTabAction', 'BrowserObservation', 'BrowserCloseTabTool'],
      ['browser_get_storage', 'BrowserGetStorageAction', 'BrowserObservation', 'BrowserGetStorageTool'],
      ['browser_set_storage', 'BrowserSetStorageAction', 'BrowserObservation', 'BrowserSetStorageTool'],
      ['browser_start_recording', 'BrowserStartRecordingAction', 'BrowserObservation', 'BrowserStartRecordingTool'],
      ['browser_stop_recording', 'BrowserStopRecordingAction', 'BrowserObservation', 'BrowserStopRecordingTool'],
      ['finish', 'FinishAction', 'FinishObservation', 'FinishTool'],
      ['think', 'ThinkAction', 'ThinkObservation', 'ThinkTool'],
    ]);
  });

  it('describes each tool as a valid ToolDefinition', () => {
    for (const tool of everyTool) {
      expect(ToolDefinitionSchema.parse(tool.definition)).toEqual(tool.definition);
      expect(tool.definition).toMatchObject({
        title: tool.name,
        description: tool.description,
        action_type: tool.actionKind,
        observation_type: tool.observationKind,
        annotations: { title: tool.name },
      });
      expect(tool.description.length).toBeGreaterThan(50);
    }
  });

  it('gives each tool a JSON Schema object for its arguments, without kind', () => {
    const required = Object.fromEntries(everyTool.map((tool) => [tool.name, tool.parameters.required ?? []]));
    expect(required).toEqual({
      terminal: ['command'],
      file_editor: ['command', 'path'],
      task_tracker: [],
      glob: ['pattern'],
      grep: ['pattern'],
      read_file: ['file_path'],
      write_file: ['file_path', 'content'],
      edit: ['file_path', 'old_string', 'new_string'],
      list_directory: [],
      planning_file_editor: ['command', 'path'],
      browser_navigate: ['url'],
      browser_click: ['index'],
      browser_get_state: [],
      browser_get_content: [],
      browser_type: ['index', 'text'],
      browser_scroll: [],
      browser_go_back: [],
      browser_list_tabs: [],
      browser_switch_tab: ['tab_id'],
      browser_close_tab: ['tab_id'],
      browser_get_storage: [],
      browser_set_storage: ['storage_state'],
      browser_start_recording: [],
      browser_stop_recording: [],
      finish: ['message'],
      think: ['thought'],
    });
    for (const tool of everyTool) {
      expect(tool.parameters).toMatchObject({ type: 'object', additionalProperties: false });
      expect(tool.parameters).not.toHaveProperty('$schema');
      const properties = tool.parameters.properties as Record<string, { description?: string }>;
      expect(properties).not.toHaveProperty('kind');
      for (const [field, schema] of Object.entries(properties)) {
        expect(schema.description, `${tool.name}.${field}`).toEqual(expect.any(String));
      }
    }
    const fileEditor = byName('file_editor').parameters.properties as Record<string, unknown>;
    expect(fileEditor.command).toMatchObject({ enum: ['view', 'create', 'str_replace', 'insert', 'undo_edit'] });
  });
});

describe('parseArguments', () => {
  it('accepts the JSON string an LLM sends and returns a valid Action', () => {
    const parsed = byName('terminal').parseArguments('{"command": "ls -la", "timeout": 5}');
    expect(parsed).toEqual({
      ok: true,
      action: { kind: 'TerminalAction', command: 'ls -la', is_input: false, timeout: 5, reset: false },
    });
    if (parsed.ok) expect(ActionSchema.parse(parsed.action)).toEqual(parsed.action);
  });

  it('names the tool and every bad field', () => {
    const missing = byName('terminal').parseArguments({ is_input: 'yes' });
    expect(missing.ok).toBe(false);
    if (!missing.ok) {
      expect(missing.error).toMatch(/^Invalid arguments for tool "terminal"/);
      expect(missing.error).toMatch(/→ at command/);
      expect(missing.error).toMatch(/→ at is_input/);
    }
    const badCommand = byName('file_editor').parseArguments({ command: 'delete', path: '/x' });
    expect(badCommand.ok).toBe(false);
    if (!badCommand.ok) expect(badCommand.error).toMatch(/"view"\|"create"/);
    const unknownField = byName('finish').parseArguments({ message: 'done', extra: 1 });
    expect(unknownField.ok).toBe(false);
    if (!unknownField.ok) expect(unknownField.error).toContain('extra');
  });

  it('reports arguments that are not a JSON object', () => {
    expect(byName('think').parseArguments('{"thought": ')).toEqual({
      ok: false,
      error: 'Invalid arguments for tool "think": they are not valid JSON.',
    });
    expect(byName('think').parseArguments('["a"]')).toEqual({
      ok: false,
      error: 'Invalid arguments for tool "think": expected a JSON object.',
    });
  });
});

describe('execute', () => {
  it('returns observations the event model accepts', async () => {
    const calls: [string, unknown][] = [
      ['terminal', { command: 'echo hi' }],
      ['file_editor', { command: 'view', path: workspace }],
      ['file_editor', { command: 'view', path: 'relative' }],
      ['task_tracker', { command: 'view' }],
      ['finish', { message: 'bye' }],
      ['think', { thought: 'hmm' }],
      ['glob', { pattern: '**/*' }],
      ['grep', { pattern: 'x' }],
      ['read_file', { file_path: 'missing.txt' }],
      ['write_file', { file_path: 'notes/a.txt', content: 'a\n' }],
      ['edit', { file_path: 'notes/a.txt', old_string: 'a', new_string: 'b' }],
      ['list_directory', { recursive: true }],
      ['planning_file_editor', { command: 'view', path: workspace }],
    ];
    for (const [name, args] of calls) {
      const tool = everyTool.find((candidate) => candidate.name === name) ?? byName(name);
      const parsed = tool.parseArguments(args);
      if (!parsed.ok) throw new Error(parsed.error);
      const observation = await tool.execute(parsed.action);
      expect(observation.kind).toBe(tool.observationKind);
      expect(ObservationSchema.parse(observation)).toEqual(observation);
    }
  });
});

describe('validateAgentTools', () => {
  it('accepts every name of the catalog and OpenHands\' params', () => {
    const tools = TOOL_CATALOG.flatMap((entry) => [{ name: entry.name }, { name: entry.className }]);
    expect(validateAgentTools({ tools, filter_tools_regex: '^(?!browser).*', include_default_tools: ['FinishTool', 'ThinkTool'] })).toEqual([]);
    expect(validateAgentTools({ tools: [{ name: 'PlanningFileEditorTool', params: { plan_path: '/w/PLAN.md' } }] })).toEqual([]);
    expect(validateAgentTools({ tools: [{ name: 'TerminalTool', params: { no_change_timeout_seconds: 5, terminal_type: 'subprocess' } }] })).toEqual([]);
  });

  it('locates each unknown tool, bad param, unknown built-in and bad regex under agent', () => {
    const problems = validateAgentTools({
      tools: [{ name: 'TerminalTool' }, { name: 'NoSuchTool' }, { name: 'TerminalTool', params: { username: 'root' } }, { name: 'PlanningFileEditorTool', params: { plan_path: 'PLAN.md' } }],
      include_default_tools: ['FinishTool', 'terminal'],
      filter_tools_regex: '(unclosed',
    });
    expect(problems.map((p) => [p.in, p.field, p.type])).toEqual([
      ['body', ['agent', 'tools', 1, 'name'], 'value_error'],
      ['body', ['agent', 'tools', 2, 'params', 'username'], 'extra_forbidden'],
      ['body', ['agent', 'tools', 3, 'params', 'plan_path'], 'value_error'],
      ['body', ['agent', 'include_default_tools', 1], 'value_error'],
      ['body', ['agent', 'filter_tools_regex'], 'value_error'],
    ]);
    expect(problems[0]?.msg).toMatch(/^Unknown tool 'NoSuchTool'\. This server runs: .*TerminalTool.*grep/);
  });
});
