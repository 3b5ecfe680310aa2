import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionSchema, ObservationSchema, ToolDefinitionSchema } from '../../../../src/events/index.js';
import { closeTools, createDefaultTools, type AnyTool } from '../../../../src/agent-server/agent/tools/index.js';

let workspace: string;
let tools: AnyTool[];

beforeAll(async () => {
  workspace = await fs.mkdtemp(path.join(os.tmpdir(), 'default-tools-'));
  tools = createDefaultTools({ workspaceDir: workspace });
});

afterAll(async () => {
  await closeTools(tools);
  await fs.rm(workspace, { recursive: true, force: true });
});

function byName(name: string): AnyTool {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
}

describe('createDefaultTools', () => {
  it('offers the five tools with their event-model kinds', () => {
    expect(tools.map((tool) => [tool.name, tool.actionKind, tool.observationKind, tool.definition.kind])).toEqual([
      ['terminal', 'TerminalAction', 'TerminalObservation', 'TerminalTool'],
      ['file_editor', 'FileEditorAction', 'FileEditorObservation', 'FileEditorTool'],
      ['task_tracker', 'TaskTrackerAction', 'TaskTrackerObservation', 'TaskTrackerTool'],
      ['finish', 'FinishAction', 'FinishObservation', 'FinishTool'],
      ['think', 'ThinkAction', 'ThinkObservation', 'ThinkTool'],
    ]);
  });

  it('describes each tool as a valid ToolDefinition', () => {
    for (const tool of tools) {
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
    const required = Object.fromEntries(tools.map((tool) => [tool.name, tool.parameters.required ?? []]));
    expect(required).toEqual({
      terminal: ['command'],
      file_editor: ['command', 'path'],
      task_tracker: [],
      finish: ['message'],
      think: ['thought'],
    });
    for (const tool of tools) {
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
    ];
    for (const [name, args] of calls) {
      const tool = byName(name);
      const parsed = tool.parseArguments(args);
      if (!parsed.ok) throw new Error(parsed.error);
      const observation = await tool.execute(parsed.action);
      expect(observation.kind).toBe(tool.observationKind);
      expect(ObservationSchema.parse(observation)).toEqual(observation);
    }
  });
});
