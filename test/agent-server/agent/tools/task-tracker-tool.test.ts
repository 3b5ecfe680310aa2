import { describe, expect, it } from 'vitest';
import { createTaskTrackerTool, type TaskTrackerObservation } from '../../../../src/agent-server/agent/tools/index.js';

function text(observation: TaskTrackerObservation): string {
  return observation.content.map((item) => ('text' in item ? item.text : '')).join('');
}

describe('task_tracker', () => {
  it('starts empty and says how to make a plan', async () => {
    const tool = createTaskTrackerTool();
    const parsed = tool.parseArguments('{}');
    if (!parsed.ok) throw new Error(parsed.error);
    const observation = await tool.execute(parsed.action);
    expect(observation).toMatchObject({ kind: 'TaskTrackerObservation', command: 'view', task_list: [], is_error: false });
    expect(text(observation)).toContain('empty');
  });

  it('replaces the list on plan and shows it on view, with defaults filled in', async () => {
    const tool = createTaskTrackerTool();
    const plan = tool.parseArguments({
      command: 'plan',
      task_list: [
        { title: 'Read the code', status: 'done' },
        { title: 'Fix the bug', notes: 'in parser.ts', status: 'in_progress' },
        { title: 'Run the tests' },
      ],
    });
    if (!plan.ok) throw new Error(plan.error);
    const planned = await tool.execute(plan.action);
    expect(planned.command).toBe('plan');
    expect(text(planned)).toMatch(/^Task list has been updated with 3 item\(s\)\./);
    const view = tool.parseArguments({ command: 'view' });
    if (!view.ok) throw new Error(view.error);
    const viewed = await tool.execute(view.action);
    expect(viewed.task_list).toEqual([
      { title: 'Read the code', notes: '', status: 'done' },
      { title: 'Fix the bug', notes: 'in parser.ts', status: 'in_progress' },
      { title: 'Run the tests', notes: '', status: 'todo' },
    ]);
    expect(text(viewed)).toBe(
      '# Task List\n\n1. [done] Read the code\n2. [in_progress] Fix the bug\n   in parser.ts\n3. [todo] Run the tests',
    );

    const replan = tool.parseArguments({ command: 'plan', task_list: [{ title: 'Only this', status: 'todo' }] });
    if (!replan.ok) throw new Error(replan.error);
    expect((await tool.execute(replan.action)).task_list).toEqual([{ title: 'Only this', notes: '', status: 'todo' }]);
  });

  it('starts from the tasks it is given, for a resumed conversation', async () => {
    const tool = createTaskTrackerTool({ initialTasks: [{ title: 'Carry on', notes: '', status: 'in_progress' }] });
    const observation = await tool.execute({ kind: 'TaskTrackerAction', command: 'view', task_list: [] });
    expect(observation.task_list).toEqual([{ title: 'Carry on', notes: '', status: 'in_progress' }]);
  });

  it('rejects a task with an unknown status', () => {
    const parsed = createTaskTrackerTool().parseArguments({ command: 'plan', task_list: [{ title: 'x', status: 'blocked' }] });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(/task_list\[0\]\.status/);
  });
});
