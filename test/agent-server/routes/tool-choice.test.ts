import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { startRequest, textMessage, useTestAgentServer } from '../../helpers/agent-server.js';
import { ValidationErrorSchema } from '../../helpers/answer.js';
import { type ScriptedLlm, startScriptedLlm, toolCalls } from '../../helpers/scripted-llm.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';
import { ConversationInfoSchema } from '../../../src/contracts/agent-server/conversation-info.js';
import { pageSchema } from '../../../src/contracts/paging.js';
import { EventSchema, type Event } from '../../../src/events/index.js';

/** Tools chosen per conversation (agent.tools, filter_tools_regex), driven over HTTP with a scripted LLM. */
describe('choosing the tools of a conversation', () => {
  let workspace: string;
  let llm: ScriptedLlm | undefined;

  beforeEach(async () => {
    workspace = await makeTempDir('tool-choice-workspace-');
  });
  afterEach(async () => {
    await llm?.close();
    llm = undefined;
    await removeDir(workspace);
  });
  const agent = useTestAgentServer({ tempPrefix: 'tool-choice-http-' });

  function agentWith(choice: Record<string, unknown>) {
    return { kind: 'Agent', llm: { model: 'scripted', base_url: llm?.baseUrl ?? 'http://127.0.0.1:9', api_key: 'sk-test' }, ...choice };
  }

  async function runToFinish(choice: Record<string, unknown>, script: Parameters<typeof startScriptedLlm>[0]): Promise<Event[]> {
    llm = await startScriptedLlm([...script, toolCalls([{ name: 'finish', arguments: { message: 'done' } }])]);
    const created = await agent.server.createConversation(
      startRequest({ agent: agentWith(choice), workspace: { working_dir: workspace }, initial_message: { ...textMessage('Go'), run: true } }),
    );
    await vi.waitFor(
      async () => expect((await agent.server.callJson('GET', `/api/conversations/${created.id}`, {}, ConversationInfoSchema)).body.execution_status).toBe('finished'),
      { timeout: 20_000, interval: 25 },
    );
    return (await agent.server.callJson('GET', `/api/conversations/${created.id}/events/search?limit=100`, {}, pageSchema(EventSchema))).body.items;
  }

  const offered = () => (llm?.requests[0]?.body.tools ?? []).map((tool) => tool.function.name);
  const observationsOf = (events: Event[]) => events.flatMap((e) => (e.kind === 'ObservationEvent' ? [e.observation] : []));
  const textOf = (content: { type: string; text?: string }[]) => content.map((c) => c.text ?? '').join('');

  it('lists every tool this server can run', async () => {
    const answer = await agent.server.callJson('GET', '/api/tools/', {}, z.array(z.string()));
    expect(answer).toEqual({
      status: 200,
      body: ['terminal', 'file_editor', 'task_tracker', 'glob', 'grep', 'read_file', 'write_file', 'edit', 'list_directory', 'planning_file_editor', 'browser_tool_set'],
    });
  });

  it("offers OpenHands' default set when agent.tools is absent", async () => {
    await runToFinish({}, []);
    expect(offered()).toEqual(['terminal', 'file_editor', 'task_tracker', 'finish', 'think']);
  });

  it('refuses an unknown tool, a bad param, an unknown built-in and a bad regex with 422 before creating anything', async () => {
    const answer = await agent.server.callJson(
      'POST',
      '/api/conversations',
      {
        json: startRequest({
          agent: agentWith({ tools: [{ name: 'GrepTool' }, { name: 'BashTool' }, { name: 'TerminalTool', params: { shell: 'zsh' } }], include_default_tools: ['NopeTool'], filter_tools_regex: '[' }),
          workspace: { working_dir: workspace },
        }),
      },
      ValidationErrorSchema,
    );
    expect(answer.status).toBe(422);
    expect(answer.body.detail.map((d) => d.loc)).toEqual([
      ['body', 'agent', 'tools', 1, 'name'],
      ['body', 'agent', 'tools', 2, 'params', 'shell'],
      ['body', 'agent', 'include_default_tools', 0],
      ['body', 'agent', 'filter_tools_regex'],
    ]);
    expect(answer.body.detail[0]?.msg).toContain("Unknown tool 'BashTool'");
    expect((await agent.server.callJson('GET', '/api/conversations/count', {}, z.number())).body).toBe(0);
  });

  it('offers only the chosen search and file tools, runs each, and records its observation kind', async () => {
    await mkdir(join(workspace, 'src'));
    await writeFile(join(workspace, 'src', 'app.ts'), 'export const answer = 42;\n');
    await writeFile(join(workspace, 'README.md'), '# Demo\n');
    const tools = ['GlobTool', 'GrepTool', 'ReadFileTool', 'WriteFileTool', 'EditTool', 'ListDirectoryTool'].map((name) => ({ name }));
    const events = await runToFinish({ tools }, [
      toolCalls([{ name: 'glob', arguments: { pattern: '**/*.ts' } }]),
      toolCalls([{ name: 'grep', arguments: { pattern: 'ANSWER\\s*=', include: '*.ts' } }]),
      toolCalls([{ name: 'read_file', arguments: { file_path: 'src/app.ts' } }]),
      toolCalls([{ name: 'write_file', arguments: { file_path: 'docs/notes.md', content: 'one\ntwo\n' } }]),
      toolCalls([{ name: 'edit', arguments: { file_path: join(workspace, 'docs/notes.md'), old_string: 'two', new_string: 'three' } }]),
      toolCalls([{ name: 'list_directory', arguments: { recursive: true } }]),
      toolCalls([{ name: 'terminal', arguments: { command: 'id' } }]),
    ]);
    expect(offered()).toEqual(['glob', 'grep', 'read_file', 'write_file', 'edit', 'list_directory', 'finish', 'think']);
    const observations = observationsOf(events);
    expect(observations.map((o) => o.kind)).toEqual([
      'GlobObservation',
      'GrepObservation',
      'ReadFileObservation',
      'WriteFileObservation',
      'EditObservation',
      'ListDirectoryObservation',
      'FinishObservation',
    ]);
    const [glob, grep, read, , edit, list] = observations;
    expect(glob).toMatchObject({ files: [join(workspace, 'src', 'app.ts')], is_error: false });
    expect(grep).toMatchObject({ matches: [join(workspace, 'src', 'app.ts')], include_pattern: '*.ts', is_error: false });
    expect(read).toMatchObject({ file_path: join(workspace, 'src', 'app.ts'), total_lines: 1, is_error: false });
    expect(textOf(read?.content ?? [])).toContain('     1  export const answer = 42;');
    expect(edit).toMatchObject({ replacements_made: 1, is_error: false });
    expect(await readFile(join(workspace, 'docs', 'notes.md'), 'utf8')).toBe('one\nthree\n');
    expect(list).toMatchObject({ total_count: 5, is_error: false });
    // The terminal was not chosen: the call is answered with an error the model can read.
    const errors = events.flatMap((e) => (e.kind === 'AgentErrorEvent' ? [e.error] : []));
    expect(errors).toEqual([expect.stringContaining('Tool "terminal" not found')]);
  });

  it('lets a planning agent view anything but change only its plan', async () => {
    await writeFile(join(workspace, 'main.py'), 'print("hi")\n');
    const plan = join(workspace, '.agents_tmp', 'PLAN.md');
    const events = await runToFinish({ tools: [{ name: 'GlobTool' }, { name: 'GrepTool' }, { name: 'PlanningFileEditorTool' }] }, [
      toolCalls([{ name: 'planning_file_editor', arguments: { command: 'view', path: join(workspace, 'main.py') } }]),
      toolCalls([{ name: 'planning_file_editor', arguments: { command: 'create', path: join(workspace, 'evil.py'), file_text: 'x' } }]),
      toolCalls([{ name: 'planning_file_editor', arguments: { command: 'str_replace', path: plan, old_str: '# 1. OBJECTIVE\n', new_str: '# 1. OBJECTIVE\nSay hi.\n' } }]),
    ]);
    expect(offered()).toEqual(['glob', 'grep', 'planning_file_editor', 'finish', 'think']);
    const [view, refused, edited] = observationsOf(events);
    expect(view).toMatchObject({ kind: 'PlanningFileEditorObservation', command: 'view', is_error: false });
    expect(textOf(view?.content ?? [])).toContain('print("hi")');
    expect(refused).toMatchObject({ kind: 'PlanningFileEditorObservation', command: 'create', is_error: true });
    expect(edited).toMatchObject({ kind: 'PlanningFileEditorObservation', command: 'str_replace', is_error: false });
    expect(await readFile(plan, 'utf8')).toMatch(/^# 1\. OBJECTIVE\nSay hi\.\n\n# 2\. CONTEXT SUMMARY/);
    await expect(readFile(join(workspace, 'evil.py'))).rejects.toThrow();
  });

  it('filters the chosen tools with filter_tools_regex, keeping finish and think', async () => {
    await runToFinish({ tools: [{ name: 'TerminalTool' }, { name: 'FileEditorTool' }, { name: 'GrepTool' }], filter_tools_regex: '^(?!terminal)' }, []);
    expect(offered()).toEqual(['file_editor', 'grep', 'finish', 'think']);
  });
});
